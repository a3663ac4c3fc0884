import { useEffect, useRef, useState } from 'preact/hooks';
import type uPlot from 'uplot';

type UPlotClass = typeof uPlot;

let library: Promise<UPlotClass> | undefined;

/** uPlot (about 145 kB as served) is loaded when a chart is first shown, not with the console. */
function loadUPlot(): Promise<UPlotClass> {
  library ??= import('uplot').then((m) => m.default);
  return library;
}

/** Colours come from the stylesheet's variables, so the charts follow its light and dark themes. */
export type Tone = 'ok' | 'warn' | 'error' | 'accent' | 'muted';

export interface ChartSeries {
  label: string;
  /** One value a step, oldest first; null leaves a gap. */
  values: Array<number | null>;
  tone: Tone;
  /** Filled below its line. */
  fill?: boolean;
  /** On a second scale, with its axis on the right. */
  right?: boolean;
  /** How a value reads in the legend; default a whole number. */
  format?: (value: number) => string;
}

/** A moment drawn as a dashed vertical line across the chart. */
export interface ChartMarker {
  /** Milliseconds since the epoch. */
  at: number;
  tone: Tone;
}

export interface TimeChartProps {
  /** What the chart shows: its caption. */
  title: string;
  /** The chart in words: its accessible name, and what a screen reader reads instead of the canvas. */
  summary: string;
  /** The first point (ms since the epoch) and the seconds between points. */
  start: number;
  stepSeconds: number;
  series: ChartSeries[];
  markers?: ChartMarker[];
  /** Names of the left and right axes. */
  leftLabel?: string;
  rightLabel?: string;
  /** For tests: `data-testid`, and data attributes saying what the chart holds. */
  testId?: string;
  data?: Record<string, string | number>;
}

const HEIGHT = 220;

/** The stretches of time the buttons above a chart show: the whole window, or its last hours. */
const RANGES: ReadonlyArray<{ label: string; minutes: number }> = [
  { label: '24 hours', minutes: 0 },
  { label: '6 hours', minutes: 360 },
  { label: '1 hour', minutes: 60 },
];

/** What a chart shows: a range of the buttons (0: everything), or a stretch the owner dragged across. */
type View = number | 'custom';

/**
 * A value with no neighbour draws no line (a lone sample, a single busy minute): such points get a
 * dot when uPlot would draw no dots (it draws them all only when few points are in view).
 */
function lonePoints(u: uPlot, seriesIdx: number, show: boolean): number[] | null {
  if (show) return null;
  const values = u.data[seriesIdx]!;
  const out: number[] = [];
  for (let i = 0; i < values.length; i++) if (values[i] != null && values[i - 1] == null && values[i + 1] == null) out.push(i);
  return out.length > 0 ? out : null;
}

/** Shows the range `view` names, ending with the minute in progress (its markers are after its point). */
function applyView(u: uPlot, view: View, stepSeconds: number): void {
  const xs = u.data[0];
  if (view === 'custom' || xs.length === 0) return;
  const end = xs[xs.length - 1]! + stepSeconds;
  u.setScale('x', { min: view === 0 ? xs[0]! : Math.max(xs[0]!, end - view * 60), max: end });
}

type Palette = Record<Tone | 'text' | 'grid', string>;

function palette(): Palette {
  const css = getComputedStyle(document.documentElement);
  const v = (name: string) => css.getPropertyValue(name).trim();
  return { text: v('--muted'), grid: v('--border'), ok: v('--ok'), warn: v('--warn'), error: v('--error'), accent: v('--accent'), muted: v('--muted') };
}

/** `#rrggbb` with an alpha, for fills under a line. */
function translucent(color: string, alpha: string): string {
  return /^#[0-9a-f]{6}$/i.test(color) ? `${color}${alpha}` : color;
}

/** Which colour scheme the browser asks for; the charts are drawn again when it changes. */
function useColorScheme(): 'light' | 'dark' {
  const query = typeof matchMedia === 'function' ? matchMedia('(prefers-color-scheme: dark)') : undefined;
  const [dark, setDark] = useState(query?.matches ?? false);
  useEffect(() => {
    if (!query) return;
    const update = () => setDark(query.matches);
    query.addEventListener('change', update);
    return () => query.removeEventListener('change', update);
  }, []);
  return dark ? 'dark' : 'light';
}

const whole = (v: number) => Math.round(v).toLocaleString();

/** Axis ticks: whole numbers only (a count has no half records). */
function wholeTicks(_: uPlot, splits: number[]): string[] {
  return splits.map((v) => (Number.isInteger(v) ? v.toLocaleString() : ''));
}

function markersPlugin(markers: { current: ChartMarker[] }, colors: Palette): uPlot.Plugin {
  return {
    hooks: {
      draw: [
        (u: uPlot) => {
          const { ctx, bbox } = u;
          const dpr = window.devicePixelRatio || 1;
          ctx.save();
          ctx.lineWidth = 2 * dpr;
          ctx.setLineDash([5 * dpr, 4 * dpr]);
          for (const m of markers.current) {
            const x = Math.round(u.valToPos(m.at / 1000, 'x', true));
            if (x < bbox.left || x > bbox.left + bbox.width) continue;
            ctx.strokeStyle = colors[m.tone];
            ctx.beginPath();
            ctx.moveTo(x, bbox.top);
            ctx.lineTo(x, bbox.top + bbox.height);
            ctx.stroke();
          }
          ctx.restore();
        },
      ],
    },
  };
}

/**
 * A time series chart (uPlot on a canvas): drag across it to zoom into a stretch of time, double-click
 * to see the whole window again; the legend shows the values under the pointer. The canvas is an
 * image to assistive technology, named by `summary`; every chart comes with a table of its data.
 */
export function TimeChart(props: TimeChartProps) {
  const { title, summary, start, stepSeconds, series, markers = [], testId } = props;
  const box = useRef<HTMLDivElement>(null);
  const chart = useRef<uPlot | null>(null);
  const markerRef = useRef(markers);
  const [error, setError] = useState<string | null>(null);
  /** The colour scheme of the chart drawn, once drawn. */
  const [rendered, setRendered] = useState<string | null>(null);
  const scheme = useColorScheme();
  const view = useRef<View>(0);
  const [shownView, setShownView] = useState<View>(0);
  const choose = (next: View) => {
    view.current = next;
    setShownView(next);
    if (chart.current) applyView(chart.current, next, stepSeconds);
  };
  const points = series[0]?.values.length ?? 0;
  const xs = Array.from({ length: points }, (_, i) => start / 1000 + i * stepSeconds);
  const data: uPlot.AlignedData = [xs, ...series.map((s) => s.values)];
  // A new chart when what it draws changes; new values alone go through setData.
  const shape = `${scheme}|${series.map((s) => `${s.label}:${s.tone}:${s.right ? 'r' : 'l'}`).join(',')}`;
  const dataRef = useRef(data);
  dataRef.current = data;

  useEffect(() => {
    let disposed = false;
    let observer: ResizeObserver | undefined;
    loadUPlot().then(
      (UPlot) => {
        if (disposed || !box.current) return;
        const colors = palette();
        const axis = (extra: Partial<uPlot.Axis>): uPlot.Axis => ({ stroke: colors.text, grid: { stroke: colors.grid, width: 1 }, ticks: { stroke: colors.grid, width: 1 }, ...extra });
        const right = series.some((s) => s.right);
        const leftFormat = series.find((s) => !s.right)?.format;
        const rightFormat = series.find((s) => s.right)?.format ?? whole;
        const options: uPlot.Options = {
          width: Math.max(280, box.current.clientWidth),
          height: HEIGHT,
          cursor: { drag: { x: true, y: false } },
          scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(1, max)] }, ...(right ? { right: { range: (_u: uPlot, _min: number, max: number): uPlot.Range.MinMax => [0, Math.max(1, max)] } } : {}) },
          series: [
            {},
            ...series.map(
              (s): uPlot.Series => ({
                label: s.label,
                scale: s.right ? 'right' : 'y',
                stroke: colors[s.tone],
                width: 1.5,
                ...(s.fill ? { fill: translucent(colors[s.tone], '33') } : {}),
                points: { filter: lonePoints },
                value: (_u, v) => (v === null || v === undefined ? '—' : (s.format ?? whole)(v)),
              }),
            ),
          ],
          axes: [
            axis({}),
            axis({ label: props.leftLabel, values: leftFormat ? (_u, splits) => splits.map(leftFormat) : wholeTicks, size: 60 }),
            ...(right ? [axis({ scale: 'right', side: 1, label: props.rightLabel, grid: { show: false }, values: (_u: uPlot, splits: number[]) => splits.map(rightFormat), size: 60 })] : []),
          ],
          plugins: [markersPlugin(markerRef, colors)],
          hooks: {
            // Dragging across the chart zooms into that stretch, which new minutes then leave alone.
            setSelect: [
              (u: uPlot) => {
                if (u.select.width > 0) {
                  view.current = 'custom';
                  setShownView('custom');
                }
              },
            ],
          },
        };
        const u = new UPlot(options, dataRef.current, box.current);
        chart.current = u;
        // uPlot shows all its data again on a double-click (its own listener runs first); the minute in progress too.
        u.over.addEventListener('dblclick', () => {
          view.current = 0;
          setShownView(0);
          applyView(u, 0, stepSeconds);
        });
        applyView(u, view.current, stepSeconds);
        setRendered(scheme);
        observer = new ResizeObserver(() => {
          if (box.current && chart.current) chart.current.setSize({ width: Math.max(280, box.current.clientWidth), height: HEIGHT });
        });
        observer.observe(box.current);
      },
      (err: Error) => setError(`The chart could not be drawn (${err.message}); the table below has its data.`),
    );
    return () => {
      disposed = true;
      observer?.disconnect();
      chart.current?.destroy();
      chart.current = null;
      setRendered(null);
    };
  }, [shape]);

  useEffect(() => {
    const u = chart.current;
    if (!u) return;
    // A stretch the owner dragged across stays while new minutes arrive; a range of the buttons moves on with them.
    if (view.current === 'custom') u.setData(data, false);
    else {
      u.setData(data);
      applyView(u, view.current, stepSeconds);
    }
  }, [JSON.stringify(data)]);

  useEffect(() => {
    markerRef.current = markers;
    chart.current?.redraw(false, false);
  }, [JSON.stringify(markers)]);

  return (
    <figure class="chart" data-testid={testId} data-rendered={rendered ? 'true' : 'false'} data-scheme={rendered ?? ''} {...Object.fromEntries(Object.entries(props.data ?? {}).map(([k, v]) => [`data-${k}`, String(v)]))}>
      <figcaption>{title}</figcaption>
      <div class="chart-ranges" role="group" aria-label={`Time range of ${title}`}>
        {RANGES.map((r) => (
          <button key={r.minutes} type="button" class="button small" aria-pressed={shownView === r.minutes} onClick={() => choose(r.minutes)}>
            {r.label}
          </button>
        ))}
      </div>
      <div class="chart-canvas" ref={box} role="img" aria-label={summary} />
      {error && <p class="hint">{error}</p>}
    </figure>
  );
}
