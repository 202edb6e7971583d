import { ActionError } from "../../protocol/errors.js";

/**
 * Runs tasks one at a time in the order they came, with at most `maxWaiting` queued: one more is
 * refused with limit_exceeded (`what` names them), so a client cannot queue work without bound.
 */
export class Turns {
  private last: Promise<unknown> = Promise.resolve();
  private waiting = 0;

  constructor(
    private readonly maxWaiting: number,
    private readonly what: string,
  ) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.waiting >= this.maxWaiting)
      throw new ActionError(
        "limit_exceeded",
        `${this.waiting} ${this.what} are already waiting; wait for their replies before sending more`,
      );
    this.waiting++;
    const turn = this.last.then(task);
    this.last = turn.catch(() => undefined);
    try {
      return await turn;
    } finally {
      this.waiting--;
    }
  }
}
