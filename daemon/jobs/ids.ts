let lastMs = 0;
let seq = 0;

/**
 * Job ids sort by creation time as strings: "j" + time + sequence + random. Uniqueness comes from
 * time and sequence; the random tail only makes ids hard to guess in passing, so Math.random will do.
 */
export function newJobId(now = Date.now()): string {
  if (now === lastMs) seq++;
  else {
    lastMs = now;
    seq = 0;
  }
  const rand = Math.floor(Math.random() * 36 ** 5)
    .toString(36)
    .padStart(5, "0");
  return `j${now.toString(36).padStart(9, "0")}${seq.toString(36).padStart(3, "0")}${rand}`;
}
