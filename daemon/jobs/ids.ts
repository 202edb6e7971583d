import { randomBytes } from "node:crypto";

let lastMs = 0;
let seq = 0;

/** Job ids sort by creation time as strings: "j" + time + sequence + random. */
export function newJobId(now = Date.now()): string {
  if (now === lastMs) seq++;
  else {
    lastMs = now;
    seq = 0;
  }
  const rand = randomBytes(3).readUIntBE(0, 3).toString(36).padStart(5, "0");
  return `j${now.toString(36).padStart(9, "0")}${seq.toString(36).padStart(3, "0")}${rand}`;
}
