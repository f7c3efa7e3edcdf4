// Hand-written SVG for bench-results/compare.svg: bars of sends/s (concurrency 256) and
// receive+ack cycles/s per target at 128 B and 16 KiB, and the open-loop latency curve
// (p99 send->ack latency against offered rate, log-log) per target at 128 B.

const WIDTH = 960;
const BAR_HEIGHT = 330;
const CURVE_HEIGHT = 330;
const COLORS = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f'];

const esc = (text) => String(text).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]);
const fmt = (n) => (n >= 10_000 ? `${Math.round(n / 1000)}k` : n >= 1000 ? `${(n / 1000).toFixed(1)}k` : String(Math.round(n)));

/**
 * Renders the chart for compare.json's data (`results`, `machine`, `command`).
 * @returns {string} an SVG document
 */
export function renderChart(data) {
  const ran = data.results.filter((r) => r.payloads !== undefined && r.payloads.length > 0);
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${BAR_HEIGHT + CURVE_HEIGHT + 60}" font-family="sans-serif" font-size="11">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="10" y="16" font-size="13" font-weight="bold">${esc(data.command)}</text>`,
    `<text x="10" y="32" fill="#555">${esc(`${data.machine.cpuModel}, ${data.machine.cores} cores, node ${data.machine.node}, ${data.startedAt}`)}</text>`,
    bars(ran, 0, 40),
    curve(ran, 0, 40 + BAR_HEIGHT + 10),
    '</svg>',
  ];
  return `${parts.join('\n')}\n`;
}

function phase(payload, prefix) {
  return payload?.phases.find((p) => p.name === prefix || p.name.startsWith(`${prefix} `)) ?? null;
}

/** Grouped bars: for each target, sends/s and cycles/s at each payload size; log scale. */
function bars(results, x0, y0) {
  const series = [];
  for (const payloadBytes of [128, 16_384]) {
    const label = payloadBytes === 128 ? '128 B' : '16 KiB';
    series.push({ label: `send c256 ${label}`, pick: (r) => phase(r.payloads.find((p) => p.payloadBytes === payloadBytes), 'send c256')?.opsPerS });
    series.push({ label: `recv+ack ${label}`, pick: (r) => phase(r.payloads.find((p) => p.payloadBytes === payloadBytes), 'drain')?.opsPerS });
  }
  const left = x0 + 60;
  const top = y0 + 30;
  const plotW = WIDTH - left - 20;
  const plotH = BAR_HEIGHT - 90;
  const values = results.flatMap((r) => series.map((s) => s.pick(r) ?? 0)).filter((v) => v > 0);
  const maxV = Math.max(10, ...values);
  const minDecade = Math.max(0, Math.floor(Math.log10(Math.min(maxV, ...values))));
  const decades = Math.max(1, Math.ceil(Math.log10(maxV)) - minDecade);
  const y = (v) => top + plotH - (plotH * (Math.log10(Math.max(10 ** minDecade, v)) - minDecade)) / decades;
  const out = [`<text x="${left}" y="${y0 + 16}" font-size="12" font-weight="bold">Throughput (msgs/s, log scale): sends at concurrency 256, receive+ack cycles draining a backlog</text>`];
  for (let d = minDecade; d <= minDecade + decades; d += 1) {
    const yy = y(10 ** d);
    out.push(`<line x1="${left}" x2="${left + plotW}" y1="${yy}" y2="${yy}" stroke="#ddd"/><text x="${left - 6}" y="${yy + 4}" text-anchor="end">${fmt(10 ** d)}</text>`);
  }
  const groupW = plotW / Math.max(1, results.length);
  const barW = Math.max(4, (groupW - 16) / series.length);
  results.forEach((r, i) => {
    const gx = left + i * groupW + 8;
    series.forEach((s, j) => {
      const v = s.pick(r);
      if (v === undefined || v === null || v <= 0) return;
      const bx = gx + j * barW;
      out.push(`<rect x="${bx.toFixed(1)}" y="${y(v).toFixed(1)}" width="${(barW - 1).toFixed(1)}" height="${(top + plotH - y(v)).toFixed(1)}" fill="${COLORS[j]}"><title>${esc(`${r.target} ${s.label}: ${v}/s`)}</title></rect>`);
      out.push(`<text x="${(bx + barW / 2).toFixed(1)}" y="${(y(v) - 3).toFixed(1)}" text-anchor="middle" font-size="8">${fmt(v)}</text>`);
    });
    out.push(`<text x="${(gx + (groupW - 16) / 2).toFixed(1)}" y="${top + plotH + 14}" text-anchor="middle">${esc(r.target)}</text>`);
  });
  series.forEach((s, j) => {
    const lx = left + j * 150;
    out.push(`<rect x="${lx}" y="${top + plotH + 30}" width="10" height="10" fill="${COLORS[j]}"/><text x="${lx + 14}" y="${top + plotH + 39}">${esc(s.label)}</text>`);
  });
  return out.join('\n');
}

/** p99 latency against offered rate, one line per target (128 B), both axes log scale. */
function curve(results, x0, y0) {
  const lines = results
    .map((r) => ({ target: r.target, steps: (r.payloads.find((p) => p.payloadBytes === 128)?.curve?.steps ?? []).filter((s) => s.latencyMs.p99 !== null) }))
    .filter((l) => l.steps.length > 0);
  const left = x0 + 60;
  const top = y0 + 30;
  const plotW = WIDTH - left - 180;
  const plotH = CURVE_HEIGHT - 70;
  const rates = lines.flatMap((l) => l.steps.map((s) => s.offeredPerS));
  const lats = lines.flatMap((l) => l.steps.map((s) => s.latencyMs.p99));
  const out = [`<text x="${left}" y="${y0 + 16}" font-size="12" font-weight="bold">Open-loop latency curve, 128 B: p99 send-&gt;ack latency (ms) by offered rate (msgs/s), log-log</text>`];
  if (lines.length === 0) return out.join('\n');
  const rMin = Math.log10(Math.min(...rates));
  const rMax = Math.log10(Math.max(...rates)) + 0.1;
  const lMin = Math.floor(Math.log10(Math.max(0.1, Math.min(...lats))));
  const lMax = Math.ceil(Math.log10(Math.max(...lats) + 1));
  const x = (v) => left + (plotW * (Math.log10(v) - rMin)) / Math.max(0.1, rMax - rMin);
  const y = (v) => top + plotH - (plotH * (Math.log10(Math.max(0.1, v)) - lMin)) / Math.max(1, lMax - lMin);
  for (let d = lMin; d <= lMax; d += 1) {
    out.push(`<line x1="${left}" x2="${left + plotW}" y1="${y(10 ** d)}" y2="${y(10 ** d)}" stroke="#ddd"/><text x="${left - 6}" y="${y(10 ** d) + 4}" text-anchor="end">${10 ** d >= 1 ? fmt(10 ** d) : 10 ** d}</text>`);
  }
  for (const r of [...new Set(rates)].sort((a, b) => a - b)) {
    out.push(`<line x1="${x(r)}" x2="${x(r)}" y1="${top}" y2="${top + plotH}" stroke="#eee"/><text x="${x(r)}" y="${top + plotH + 14}" text-anchor="middle">${fmt(r)}</text>`);
  }
  lines.forEach((l, i) => {
    const color = COLORS[i % COLORS.length];
    const pts = l.steps.map((s) => `${x(s.offeredPerS).toFixed(1)},${y(s.latencyMs.p99).toFixed(1)}`).join(' ');
    out.push(`<polyline points="${pts}" fill="none" stroke="${color}" stroke-width="2"/>`);
    for (const s of l.steps) out.push(`<circle cx="${x(s.offeredPerS).toFixed(1)}" cy="${y(s.latencyMs.p99).toFixed(1)}" r="3" fill="${color}"><title>${esc(`${l.target} ${s.offeredPerS}/s: p99 ${s.latencyMs.p99} ms`)}</title></circle>`);
    out.push(`<line x1="${left + plotW + 20}" x2="${left + plotW + 40}" y1="${top + 10 + i * 16}" y2="${top + 10 + i * 16}" stroke="${color}" stroke-width="2"/><text x="${left + plotW + 44}" y="${top + 14 + i * 16}">${esc(l.target)}</text>`);
  });
  return out.join('\n');
}
