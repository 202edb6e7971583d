const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** At most this many extra poll phases after a request's end record, while output keeps arriving. */
const MAX_ROUNDS = 8;

/**
 * Waits until the output a child wrote before its end-of-request record has been read. The record
 * comes on another descriptor than stdout/stderr, and one poll phase may hand over the record
 * before bytes that were written earlier; those bytes are already in the kernel's buffers (a
 * writer blocks on a full pipe, so at most a pipe's capacity can be pending), and the next poll
 * phase reads them. Two turns of setImmediate put one whole poll phase between here and the
 * return; while that phase brought output, one more (bounded: a background process may write
 * without end).
 */
export async function afterPendingOutput(bytesRead: () => number): Promise<void> {
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const before = bytesRead();
    await nextTurn();
    await nextTurn();
    if (bytesRead() === before) return;
  }
}
