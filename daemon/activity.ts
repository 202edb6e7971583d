/** When anything last happened (an action, a job's output or state): the idle clock. */
export class Activity {
  private last = Date.now();

  touch(): void {
    this.last = Date.now();
  }

  get lastActivity(): Date {
    return new Date(this.last);
  }

  get idleMs(): number {
    return Date.now() - this.last;
  }
}
