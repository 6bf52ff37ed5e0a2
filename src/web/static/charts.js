// @ts-check
// Charts on uPlot (served from the package, global `uPlot`): lines, point markers, bars and
// stacked bars over the step axis, with epoch boundaries drawn as dashed lines. A chart keeps
// its uPlot instance and takes new data in place, so live updates do not rebuild it.
import { append, h, isNum } from './util.js';

/** uPlot, loaded by index.html (a classic script, run before this module) as a global. */
const uPlot = /** @type {any} */ (globalThis).uPlot;

export const COLORS = {
  train: '#4c6ef5',
  candidate: '#f08c00',
  current: '#2b8a3e',
  best: '#862e9c',
  accept: '#2b8a3e',
  reject: '#c92a2a',
  skip: '#868e96',
  lr: '#1971c2',
  applied: '#2f9e44',
};

/** Whole steps only on the x axis. */
const STEP_INCRS = [1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 5000, 10000];

const STAGE_COLORS = [
  '#4c6ef5',
  '#f08c00',
  '#2b8a3e',
  '#c2255c',
  '#1098ad',
  '#862e9c',
  '#e8590c',
  '#5c940d',
  '#495057',
  '#d6336c',
];
export const stageColor = (i) => STAGE_COLORS[i % STAGE_COLORS.length];

function epochPlugin(getLines) {
  return {
    hooks: {
      draw: [
        (u) => {
          const lines = getLines();
          if (!lines?.length) return;
          const { ctx } = u;
          const { top, height } = u.bbox;
          ctx.save();
          ctx.strokeStyle = 'rgba(80,90,110,0.55)';
          ctx.fillStyle = 'rgba(80,90,110,0.9)';
          ctx.setLineDash([5, 4]);
          ctx.lineWidth = 1 * devicePixelRatio;
          ctx.font = `${11 * devicePixelRatio}px system-ui, sans-serif`;
          let labelsEnd = -Infinity;
          for (const line of lines) {
            const x = Math.round(u.valToPos(line.x, 'x', true));
            if (x < u.bbox.left || x > u.bbox.left + u.bbox.width) continue;
            ctx.beginPath();
            ctx.moveTo(x, top);
            ctx.lineTo(x, top + height);
            ctx.stroke();
            if (!line.label) continue;
            // A label goes right of its line, or left of it near the edge; one that would
            // overlap the previous label is left out (the line stays).
            const room = u.bbox.left + u.bbox.width - x;
            const w = ctx.measureText(line.label).width;
            const pad = 4 * devicePixelRatio;
            const left = w + 2 * pad < room ? x + pad : x - pad - w;
            if (left < labelsEnd + pad) continue;
            ctx.textAlign = 'left';
            ctx.textBaseline = 'top';
            ctx.fillText(line.label, left, top + 3 * devicePixelRatio);
            labelsEnd = left + w;
          }
          ctx.restore();
        },
      ],
    },
  };
}

/**
 * A chart in `parent`. spec: { title, yLabel, y2Label?, series: [{ label, color, kind: 'line' |
 * 'points' | 'bars', scale?: 'y2', dash?, hollow? (points), fmt? }], stacked?: bool, yRange?: [min, max] }.
 */
export function createChart(parent, spec) {
  const box = h('div.chart', { dataset: { chart: spec.id ?? spec.title } }, h('div.title', spec.title));
  const holder = h('div');
  append(box, holder);
  append(parent, box);
  let u;
  let epochLines = [];
  let raw = [];

  const fmtY = spec.fmt ?? ((v) => (v == null ? '—' : Number.isInteger(v) ? String(v) : v.toFixed(3)));
  // The legend names the step under the cursor, and nothing when there is none ("step: —" said
  // nothing); the style sheet hides this entry's label.
  const series = [{ label: 'step', value: (_u, v) => (v == null ? '' : `step ${v}`) }];
  spec.series.forEach((s, i) => {
    const base = { label: s.label, stroke: s.color, scale: s.scale ?? 'y', spanGaps: true };
    const value = spec.stacked
      ? (_u, _v, _si, idx) => (idx == null ? '—' : fmtY(raw[i]?.[idx] ?? null))
      : (_u, v) => fmtY(v);
    if (s.kind === 'points') {
      series.push({
        ...base,
        value,
        width: 0,
        paths: () => null,
        points: {
          show: true,
          size: s.size ?? 9,
          fill: s.hollow ? '#fff' : s.color,
          stroke: s.color,
          width: s.hollow ? 2 : 1,
        },
      });
    } else if (s.kind === 'bars' || spec.stacked) {
      series.push({
        ...base,
        value,
        fill: `${s.color}cc`,
        width: 0,
        paths: uPlot.paths.bars({ size: [0.7, 40], gap: 1 }),
        points: { show: false },
      });
    } else {
      series.push({
        ...base,
        value,
        width: s.width ?? 2,
        dash: s.dash,
        points: { show: (self) => self.data[0].length < 60, size: 4 },
      });
    }
  });
  // Stacked bars: the tallest (the total) is drawn first, each smaller sum over it.
  const order = spec.stacked ? spec.series.map((_, i) => spec.series.length - i) : null;

  /** @type {any[]} */
  const axes = [
    { label: 'step', size: 36, gap: 2, grid: { stroke: '#eef0f4' }, incrs: STEP_INCRS },
    {
      label: spec.yLabel ?? '',
      size: 58,
      grid: { stroke: '#eef0f4' },
      values: spec.axisFmt ? (_u, vals) => vals.map(spec.axisFmt) : undefined,
    },
  ];
  // Half a step of margin each side, so the first and last bars show whole.
  const scales = {
    x: { time: false, range: (_u, min, max) => [(min ?? 0) - 0.5, (max ?? 1) + 0.5] },
    y: spec.yRange
      ? { range: spec.yRange }
      : { range: (_u, min, max) => [Math.min(0, min ?? 0), max > 0 ? max * 1.08 : 1] },
  };
  if (spec.series.some((s) => s.scale === 'y2')) {
    axes.push({
      side: 1,
      scale: 'y2',
      label: spec.y2Label ?? '',
      size: 58,
      grid: { show: false },
      values: spec.axis2Fmt ? (_u, vals) => vals.map(spec.axis2Fmt) : undefined,
    });
    scales.y2 = { range: (_u, min, max) => [Math.min(0, min ?? 0), max > 0 ? max * 1.08 : 1] };
  }

  function width() {
    return Math.max(300, (holder.clientWidth || box.clientWidth || 600) - 4);
  }

  function build(data) {
    const opts = {
      width: width(),
      height: spec.height ?? 240,
      scales,
      series: order ? [series[0], ...order.map((i) => series[i])] : series,
      axes,
      legend: { live: true },
      cursor: { points: { size: 6 } },
      plugins: [epochPlugin(() => epochLines)],
    };
    u = new uPlot(opts, data, holder);
    /** @type {any} */ (box)._uplot = u;
  }

  /** xs: step numbers; ys: one array per series (null where there is no value). */
  function setData(xs, ys, lines = []) {
    epochLines = lines;
    box.dataset.points = String(xs.length);
    let data;
    if (spec.stacked) {
      raw = ys;
      const sums = [];
      let acc = xs.map(() => 0);
      for (const y of ys) {
        acc = acc.map((a, j) => a + (isNum(y[j]) ? y[j] : 0));
        sums.push(acc.map((v, j) => (ys.some((yy) => isNum(yy[j])) ? v : null)));
      }
      data = [xs, ...order.map((i) => sums[i - 1])];
    } else {
      data = [xs, ...ys];
    }
    // Markers shrink as steps add up, so a long run stays readable.
    const scale = xs.length > 400 ? 0.4 : xs.length > 120 ? 0.6 : 1;
    if (!u) build(data);
    spec.series.forEach((s) => {
      if (s.kind !== 'points') return;
      const series = u.series.find((x) => x.label === s.label);
      if (series) series.points.size = Math.max(3, (s.size ?? 9) * scale);
    });
    u.setData(data);
    // uPlot spreads a single point over 0–100: the x scale is set to it, and its range adds half a
    // step either side.
    if (xs.length === 1) u.setScale('x', { min: xs[0], max: xs[0] });
    u.redraw(false, true);
  }

  const ro = new ResizeObserver(() => {
    if (u && Math.abs(u.width - width()) > 4) u.setSize({ width: width(), height: spec.height ?? 240 });
  });
  ro.observe(box);

  return {
    el: box,
    setData,
    destroy() {
      ro.disconnect();
      u?.destroy();
      box.remove();
    },
  };
}
