/**
 * One writer at a time per target path inside this daemon, so a conditional write's check
 * (ifMatch) and its rename happen with nobody else's rename in between.
 */
const tails = new Map<string, Promise<void>>();

export async function withPathLock<T>(path: string, fn: () => Promise<T>): Promise<T> {
  const previous = tails.get(path) ?? Promise.resolve();
  let release!: () => void;
  const mine = new Promise<void>((resolve) => (release = resolve));
  const tail = previous.then(() => mine);
  tails.set(path, tail);
  await previous;
  try {
    return await fn();
  } finally {
    release();
    if (tails.get(path) === tail) tails.delete(path);
  }
}
