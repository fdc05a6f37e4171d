/**
 * Progress of a long CLI step on standard error: on a terminal a bar redrawn in place (cli-progress,
 * at most ten times a second), elsewhere (a log, a pipe, CI) plain lines, one per tenth of the way
 * and one at the end, so that logs stay readable. Messages written meanwhile go through `log`, which
 * puts them above the bar.
 */
import { MultiBar, Presets, type SingleBar } from 'cli-progress';

export class Progress {
  private lastStep = 0;
  private readonly bars: MultiBar | undefined;
  private readonly bar: SingleBar | undefined;

  constructor(
    private readonly label: string,
    private readonly total: number,
    private readonly out: NodeJS.WriteStream = process.stderr,
    tty = out.isTTY === true,
  ) {
    if (!tty) return;
    this.bars = new MultiBar(
      {
        stream: out,
        format: `${label} [{bar}] {value}/{total} {percentage}%`,
        barsize: 30,
        fps: 10,
        hideCursor: false,
        clearOnComplete: false,
        // The stream is a terminal (or a test's stand-in for one): draw whatever it says of itself.
        noTTYOutput: true,
      },
      Presets.legacy,
    );
    this.bar = this.bars.create(total, 0);
  }

  update(done: number): void {
    if (this.bar) {
      this.bar.update(done);
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
    if (!this.bars) {
      this.out.write(`${line}\n`);
      return;
    }
    this.bars.log(`${line}\n`);
    // Drawn now: cli-progress writes its log only at the next redraw, and `stop` drops what is left.
    this.bars.update();
  }

  /** The bar's last state left on its line. */
  end(): void {
    this.bars?.stop();
  }
}
