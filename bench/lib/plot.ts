import type { Results } from './results.ts';
import { MiB } from './stats.ts';

/**
 * The growth curves as a hand-written SVG: four small line charts over the number of records (log scale), drawn
 * from results.json alone, so the picture in the docs is always the figures of one run.
 */
type Series = { name: string; color: string; dash?: boolean; points: [number, number][]; labels?: string[] };
type Chart = { title: string; unit: string; log?: boolean; series: Series[]; lines?: { y: number; label: string }[] };

const W = 380;
const H = 280;
// The legend sits between the title and the plot, in two columns, so it never covers a line.
const PAD = { left: 52, right: 14, top: 74, bottom: 34 };
const COLORS = ['#1f6feb', '#d1242f', '#1a7f37', '#9a6700', '#8250df', '#57606a'];

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const shortCount = (n: number) => (n >= 1e6 ? `${+(n / 1e6).toFixed(1)}M` : `${Math.round(n / 1e3)}k`);
const label = (v: number) => (v >= 1000 ? `${+(v / 1000).toFixed(1)}k` : v >= 10 ? String(Math.round(v)) : String(+v.toPrecision(2)));

function niceTicks(max: number): number[] {
  const raw = max / 4;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? raw;
  const ticks = [0];
  while (ticks[ticks.length - 1]! < max) ticks.push(ticks.length * step);
  return ticks;
}

function chart(c: Chart, ox: number, oy: number, xs: number[]): string {
  const values = c.series.flatMap((s) => s.points.map((p) => p[1])).concat((c.lines ?? []).map((l) => l.y)).filter((v) => Number.isFinite(v) && v > 0);
  const xMin = Math.log10(Math.min(...xs) / 1.25);
  const xMax = Math.log10(Math.max(...xs) * 1.25);
  const px = (x: number) => ox + PAD.left + ((Math.log10(x) - xMin) / (xMax - xMin)) * (W - PAD.left - PAD.right);
  let py: (y: number) => number;
  let ticks: number[];
  if (c.log) {
    const lo = Math.floor(Math.log10(Math.min(...values)));
    const hi = Math.ceil(Math.log10(Math.max(...values)));
    ticks = Array.from({ length: hi - lo + 1 }, (_, i) => 10 ** (lo + i));
    py = (y) => oy + H - PAD.bottom - ((Math.log10(y) - lo) / Math.max(1, hi - lo)) * (H - PAD.top - PAD.bottom);
  } else {
    ticks = niceTicks(Math.max(...values) * 1.08);
    const top = ticks[ticks.length - 1]!;
    py = (y) => oy + H - PAD.bottom - (y / top) * (H - PAD.top - PAD.bottom);
  }
  const parts: string[] = [];
  parts.push(`<text x="${ox + PAD.left}" y="${oy + 18}" class="title">${esc(c.title)} <tspan class="unit">${esc(c.unit)}</tspan></text>`);
  for (const t of ticks) {
    parts.push(`<line x1="${ox + PAD.left}" x2="${ox + W - PAD.right}" y1="${py(t).toFixed(1)}" y2="${py(t).toFixed(1)}" class="grid"/>`);
    parts.push(`<text x="${ox + PAD.left - 6}" y="${(py(t) + 4).toFixed(1)}" class="tick" text-anchor="end">${label(t)}</text>`);
  }
  for (const x of xs) {
    parts.push(`<line x1="${px(x).toFixed(1)}" x2="${px(x).toFixed(1)}" y1="${oy + PAD.top}" y2="${oy + H - PAD.bottom}" class="grid"/>`);
    parts.push(`<text x="${px(x).toFixed(1)}" y="${oy + H - PAD.bottom + 16}" class="tick" text-anchor="middle">${shortCount(x)}</text>`);
  }
  parts.push(`<text x="${ox + W - PAD.right}" y="${oy + H - 4}" class="tick" text-anchor="end">records</text>`);
  for (const l of c.lines ?? []) {
    parts.push(`<line x1="${ox + PAD.left}" x2="${ox + W - PAD.right}" y1="${py(l.y).toFixed(1)}" y2="${py(l.y).toFixed(1)}" class="target"/>`);
    parts.push(`<text x="${ox + W - PAD.right - 2}" y="${(py(l.y) - 4).toFixed(1)}" class="target-label" text-anchor="end">${esc(l.label)}</text>`);
  }
  c.series.forEach((s, i) => {
    const pts = s.points.filter((p) => Number.isFinite(p[1]) && p[1] > 0);
    if (pts.length === 0) return;
    const path = pts.map((p, j) => `${j === 0 ? 'M' : 'L'}${px(p[0]).toFixed(1)},${py(p[1]).toFixed(1)}`).join(' ');
    parts.push(`<path d="${path}" fill="none" stroke="${s.color}" stroke-width="2"${s.dash ? ' stroke-dasharray="5 3"' : ''}/>`);
    for (const p of pts) parts.push(`<circle cx="${px(p[0]).toFixed(1)}" cy="${py(p[1]).toFixed(1)}" r="3" fill="${s.color}"/>`);
    s.points.forEach((p, j) => {
      const text = s.labels?.[j];
      if (!text || !Number.isFinite(p[1])) return;
      parts.push(`<text x="${px(p[0]).toFixed(1)}" y="${(py(p[1]) - 8).toFixed(1)}" class="point" text-anchor="middle">${esc(text)}</text>`);
    });
    const ly = oy + 32 + Math.floor(i / 2) * 13;
    const lx = ox + PAD.left + (i % 2) * 150;
    parts.push(`<line x1="${lx}" x2="${lx + 16}" y1="${ly}" y2="${ly}" stroke="${s.color}" stroke-width="2"${s.dash ? ' stroke-dasharray="5 3"' : ''}/>`);
    parts.push(`<text x="${lx + 20}" y="${ly + 4}" class="legend">${esc(s.name)}</text>`);
  });
  return parts.join('\n');
}

export function renderPlot(r: Results): string {
  const sizes = r.sizes;
  const xs = sizes.map((s) => s.records);
  const at = (f: (s: Results['sizes'][number]) => number | undefined | null): [number, number][] => sizes.map((s) => [s.records, f(s) ?? Number.NaN]);
  const names = [...new Set(sizes.flatMap((s) => s.lookups.map((l) => l.name)))];
  const charts: Chart[] = [
    {
      title: 'Lookups: our throughput / nginx\u2019s',
      unit: '(ratio)',
      series: names.map((name, i) => ({ name, color: COLORS[i % COLORS.length]!, points: at((s) => s.lookups.find((l) => l.name === name)?.ratio) })),
      lines: [{ y: 0.35, label: 'target 0.35 (detail 0.30, catalog 0.25)' }],
    },
    {
      title: 'Search latency',
      unit: '(ms, log scale)',
      log: true,
      series: [
        { name: 'ours p50', color: COLORS[0]!, points: at((s) => s.search?.ours.p50Ms) },
        { name: 'ours p99', color: COLORS[0]!, dash: true, points: at((s) => s.search?.ours.p99Ms) },
        { name: 'SQLite FTS5 p50', color: COLORS[1]!, points: at((s) => s.search?.sqlite?.p50Ms) },
        { name: 'SQLite FTS5 p99', color: COLORS[1]!, dash: true, points: at((s) => s.search?.sqlite?.p99Ms) },
      ],
    },
    {
      title: 'Build time',
      unit: '(seconds; labels: peak memory)',
      series: [
        {
          name: 'npm run build',
          color: COLORS[2]!,
          points: at((s) => s.build.seconds),
          labels: sizes.map((s) => `${Math.round(s.build.peakRssBytes / MiB).toLocaleString('en-US')} MiB`),
        },
      ],
    },
    {
      title: 'Server memory',
      unit: '(MiB resident)',
      series: [
        { name: 'under load (peak)', color: COLORS[0]!, points: at((s) => (s.memory ? s.memory.underLoadBytes / MiB : null)) },
        { name: 'after start', color: COLORS[0]!, dash: true, points: at((s) => (s.memory ? s.memory.afterStartBytes / MiB : null)) },
      ],
      lines: [{ y: 256, label: 'target 256 MiB' }],
    },
  ];
  const width = W * 2 + 10;
  const height = H * 2 + 40;
  const body = charts.map((c, i) => chart(c, (i % 2) * (W + 10), 28 + Math.floor(i / 2) * H, xs)).join('\n');
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="system-ui, -apple-system, 'Segoe UI', sans-serif">
<style>
  .title { font-size: 13px; font-weight: 600; fill: #24292f; }
  .unit { font-weight: 400; fill: #57606a; }
  .tick { font-size: 10px; fill: #57606a; }
  .legend { font-size: 10px; fill: #24292f; }
  .point { font-size: 10px; fill: #24292f; }
  .grid { stroke: #d0d7de; stroke-width: 1; }
  .target { stroke: #cf222e; stroke-width: 1; stroke-dasharray: 2 3; }
  .target-label { font-size: 10px; fill: #cf222e; }
  .heading { font-size: 12px; fill: #57606a; }
</style>
<rect width="100%" height="100%" fill="#ffffff"/>
<text x="8" y="18" class="heading">device-510k, npm run bench (${r.mode} run, ${r.startedAt.slice(0, 10)}): ${esc(sizes.map((s) => `${s.label} = ${s.records.toLocaleString('en-US')}`).join(', '))} records</text>
${body}
</svg>
`;
}
