// The five charts of `/api/metrics/series`, drawn with Chart.js (from /static/vendor). A chart
// is made once and its data replaced after, without animation, so a change of filters redraws
// at once.
//
// Chart.js is 200 KB of script. The page's scripts no longer wait for it to run: this module
// adds its script tag (the page preloads the file), the page asks for its numbers at once, and
// the library runs while the server works them out; the first charts wait for both. The mark
// `parley:chart-library` is when it has run.

import { duration } from "./admin-trace.js";

const library = new Promise((resolve, reject) => {
  const script = document.createElement("script");
  script.src = "/static/vendor/chart.umd.min.js";
  script.addEventListener("load", () => {
    performance.mark("parley:chart-library");
    resolve();
  });
  script.addEventListener("error", () => reject(new Error("the charts' library did not load")));
  document.head.append(script);
});

const COLORS = {
  blue: "#2563eb", green: "#16a34a", red: "#dc2626", amber: "#d97706",
  violet: "#7c3aed", grey: "#94a3b8",
};
const charts = new Map();

function draw(id, config) {
  const canvas = document.getElementById(id);
  const existing = charts.get(id);
  if (existing) {
    existing.data = config.data;
    existing.update("none");
    return existing;
  }
  const chart = new window.Chart(canvas, {
    ...config,
    options: {
      animation: false,
      responsive: true,
      maintainAspectRatio: false,
      datasets: { bar: { maxBarThickness: 28 } },
      plugins: { legend: { display: false } },
      ...config.options,
    },
  });
  charts.set(id, chart);
  return chart;
}

// A slice's start as a label: the time of day for slices under a day, else the date.
function sliceLabel(iso, bucketSeconds) {
  const when = new Date(iso);
  if (bucketSeconds >= 86400) return when.toLocaleDateString();
  return when.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
}

function latencyLabel(bin, previous) {
  if (bin.below_ms === null) return `≥ ${duration(previous)}`;
  return `< ${duration(bin.below_ms)}`;
}

export async function drawCharts(series) {
  await library;
  const labels = series.buckets.map((b) => sliceLabel(b.start, series.bucket_s));
  draw("chart-success", {
    type: "bar",
    data: {
      labels,
      datasets: [
        {
          type: "line", label: "succeeded %", yAxisID: "rate", borderColor: COLORS.green,
          backgroundColor: COLORS.green, spanGaps: true, pointRadius: 2,
          data: series.buckets.map((b) => (b.success_rate === null ? null : b.success_rate * 100)),
        },
        {
          label: "runs", yAxisID: "runs", backgroundColor: COLORS.grey,
          data: series.buckets.map((b) => b.runs),
        },
      ],
    },
    options: {
      plugins: { legend: { display: true, position: "bottom" } },
      scales: {
        rate: { position: "left", min: 0, max: 100 },
        runs: { position: "right", beginAtZero: true, grid: { drawOnChartArea: false } },
      },
    },
  });
  draw("chart-latency", {
    type: "bar",
    data: {
      labels: series.latency.map((bin, n) => latencyLabel(bin, series.latency[n - 1]?.below_ms)),
      datasets: [{ label: "runs", backgroundColor: COLORS.blue, data: series.latency.map((b) => b.runs) }],
    },
    options: { scales: { y: { beginAtZero: true, ticks: { precision: 0 } } } },
  });
  const tools = series.tools.slice(0, 12);
  draw("chart-tools", {
    type: "bar",
    data: {
      labels: tools.map((t) => t.name),
      datasets: [{ label: "calls", backgroundColor: COLORS.violet, data: tools.map((t) => t.calls) }],
    },
    options: { indexAxis: "y", scales: { x: { beginAtZero: true, ticks: { precision: 0 } } } },
  });
  drawErrors(series.errors);
  draw("chart-reliability", {
    type: "line",
    data: {
      labels,
      datasets: [{
        label: "average score", borderColor: COLORS.amber, backgroundColor: COLORS.amber,
        spanGaps: true, pointRadius: 2, data: series.buckets.map((b) => b.average_reliability),
      }],
    },
    options: { scales: { y: { min: 0, max: 100 } } },
  });
}

// By finish reason in the chart; the commonest error messages listed under it, as text.
function drawErrors(errors) {
  const byReason = new Map();
  for (const e of errors) byReason.set(e.finish_reason, (byReason.get(e.finish_reason) || 0) + e.runs);
  draw("chart-errors", {
    type: "bar",
    data: {
      labels: [...byReason.keys()],
      datasets: [{ label: "runs", backgroundColor: COLORS.red, data: [...byReason.values()] }],
    },
    options: { indexAxis: "y", scales: { x: { beginAtZero: true, ticks: { precision: 0 } } } },
  });
  const list = document.getElementById("error-list");
  list.replaceChildren(...errors.filter((e) => e.error).slice(0, 5).map((e) => {
    const item = document.createElement("li");
    item.textContent = `${e.runs} × ${e.error}`;
    item.title = e.finish_reason;
    return item;
  }));
}
