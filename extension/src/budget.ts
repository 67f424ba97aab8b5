// The restart budget: a crashed server is restarted a few times, then left stopped with one
// plain message — never a loop of restarts.
export class RestartBudget {
  private times: number[] = [];
  constructor(private readonly max = 4, private readonly windowMs = 3 * 60_000,
              private readonly now: () => number = Date.now) {}

  /** True when one more restart fits the budget (and counts it). */
  take(): boolean {
    const t = this.now();
    this.times = this.times.filter((x) => t - x < this.windowMs);
    if (this.times.length >= this.max) return false;
    this.times.push(t);
    return true;
  }

  reset(): void {
    this.times = [];
  }
}
