/**
 * Progress of a long CLI step on standard error: on a terminal a bar redrawn in place (at most ten
 * times a second), elsewhere (a log, a pipe, CI) plain lines, one per tenth of the way and one at the
 * end, so that logs stay readable. Messages written meanwhile go through `log`, which clears the
 * bar first and draws it again after.
 */
export class Progress {
  private done = 0;
  private drawn = 0;
  private lastStep = 0;
  private bar = false;

  constructor(
    private readonly label: string,
    private readonly total: number,
    private readonly out: NodeJS.WriteStream = process.stderr,
    private readonly tty = out.isTTY === true,
  ) {}

  update(done: number): void {
    this.done = done;
    if (this.tty) {
      const now = Date.now();
      if (done === this.total || now - this.drawn >= 100) {
        this.drawn = now;
        this.draw();
      }
      return;
    }
    const step = Math.floor((done * 10) / Math.max(1, this.total));
    if (step > this.lastStep || done === this.total) {
      this.lastStep = step;
      this.out.write(`tessera: ${this.label}: ${done}/${this.total}\n`);
    }
  }

  /** A line for the user, the bar kept below it. */
  log(line: string): void {
    if (this.bar) this.out.write('\r\x1b[K');
    this.out.write(`${line}\n`);
    if (this.bar) this.draw();
  }

  /** The bar's last state left on its line. */
  end(): void {
    if (this.bar) this.out.write('\n');
    this.bar = false;
  }

  private draw(): void {
    const width = 30;
    const fraction = this.total === 0 ? 1 : this.done / this.total;
    const filled = Math.round(fraction * width);
    const text = `${this.label} [${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${this.done}/${this.total} ${Math.floor(fraction * 100)}%`;
    this.out.write(`\r\x1b[K${text}`);
    this.bar = true;
  }
}
