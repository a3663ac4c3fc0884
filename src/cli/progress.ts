import type { SingleBar } from 'cli-progress';

export interface Progress {
  /** `values` fill the format's `{name}` placeholders beyond cli-progress's own. */
  update(done: number, total: number, values?: Record<string, string | number>): void;
  /** Leaves the finished bar on screen; call it whatever happened, before printing anything else. */
  stop(): void;
}

/**
 * A progress bar on `stream` for work reported in steps, shown only when `stream` is a terminal
 * (redirected output and CI logs stay free of control characters) and only when the first step
 * leaves work to do, so a short run prints nothing but its result.
 */
export function createProgress(label: string, stream: NodeJS.WritableStream & { isTTY?: boolean } = process.stderr, format = `${label} [{bar}] {percentage}% | {value}/{total} | ETA {eta_formatted}`): Progress {
  let bar: SingleBar | undefined;
  return {
    update(done, total, values) {
      if (!bar) {
        if (stream.isTTY !== true || done >= total) return;
        // Loaded only when a bar is drawn: most commands never draw one.
        const { Presets, SingleBar } = require('cli-progress') as typeof import('cli-progress');
        bar = new SingleBar({ stream, format, etaBuffer: 20 }, Presets.shades_classic);
        bar.start(total, done, values);
        return;
      }
      bar.setTotal(total);
      bar.update(done, values);
    },
    stop() {
      bar?.stop();
      bar = undefined;
    },
  };
}
