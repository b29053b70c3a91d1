/** @internal */

/** Two plots a row on a laptop screen, one on a narrow one; text large enough to read at a glance. */
export const pageStyle = `
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: #111; background: #fff; margin: 0 24px 48px; }
header { max-width: 1280px; }
h1 { font-size: 24px; margin: 20px 0 6px; }
h2 { font-size: 20px; margin: 28px 0 6px; border-top: 2px solid #222; padding-top: 12px; }
h3 { font-size: 15px; margin: 0 0 4px; font-weight: 600; }
.note, .legend-note { margin: 2px 0; color: #333; }
.legend-note { font-size: 13px; }
.verdict { font-size: 16px; background: #f2f2f2; border-left: 5px solid #222; padding: 8px 12px; max-width: 1240px; }
.facts { display: grid; grid-template-columns: max-content 1fr; gap: 2px 16px; margin: 8px 0 14px; font-size: 14px; }
.facts dt { color: #444; }
.facts dd { margin: 0; }
.plots { display: grid; grid-template-columns: repeat(auto-fill, minmax(520px, 1fr)); gap: 18px 24px; max-width: 1280px; }
.plot { min-width: 0; }
.uplot { font-family: inherit; }
.u-legend { font-size: 13px; }
`

/**
 * Runs in the page: draws every plot of the inlined data with uPlot. Plain ES2017, no module: the
 * file is opened from disk. A plot container gets `data-drawn` once its chart exists; the 429s and
 * pauses are drawn on the time plots by a hook.
 */
export const pageScript = `
(function () {
  "use strict";
  var model = JSON.parse(document.getElementById("sluice-report-data").textContent);
  var dashes = { solid: undefined, dashed: [9, 5], dotted: [2, 4], points: undefined, bars: undefined };
  var bars = uPlot.paths.bars({ size: [0.75, 80] });
  // a bucket's figure holds for the whole bucket: steps, not slopes between bucket starts
  var steps = uPlot.paths.stepped({ align: 1 });

  function seriesOptions(s) {
    var o = { label: s.label, stroke: s.color, width: s.style === "dotted" ? 2 : 2.25, spanGaps: false };
    if (dashes[s.style] !== undefined) o.dash = dashes[s.style];
    if (s.style === "points") {
      o.paths = function () { return null; };
      o.points = { show: true, size: 8, stroke: s.color, fill: "#fff", width: 2 };
    } else if (s.style === "bars") {
      o.paths = bars;
      o.fill = s.color;
      o.points = { show: false };
    } else {
      o.paths = steps;
      o.points = { show: false };
    }
    return o;
  }

  function markers(section) {
    return function (u) {
      var ctx = u.ctx, top = u.bbox.top, height = u.bbox.height;
      ctx.save();
      ctx.setLineDash([]);
      section.pauses.forEach(function (p) {
        var a = u.valToPos(p[0], "x", true), b = u.valToPos(p[1], "x", true);
        var left = Math.max(a, u.bbox.left), right = Math.min(b, u.bbox.left + u.bbox.width);
        if (right <= left) return;
        ctx.fillStyle = "rgba(0, 0, 0, 0.10)";
        ctx.fillRect(left, top, right - left, height);
      });
      ctx.strokeStyle = "#b02020";
      ctx.fillStyle = "#b02020";
      ctx.lineWidth = 1.5 * devicePixelRatio;
      ctx.font = (11 * devicePixelRatio) + "px system-ui, sans-serif";
      section.upstream.forEach(function (e) {
        var x = u.valToPos(e[0], "x", true);
        ctx.beginPath();
        ctx.moveTo(x, top);
        ctx.lineTo(x, top + height);
        ctx.stroke();
        ctx.fillText("429\\u00d7" + e[1], x + 3 * devicePixelRatio, top + 12 * devicePixelRatio);
      });
      ctx.restore();
    };
  }

  function draw(plot, section, parent) {
    var box = document.createElement("div");
    box.className = "plot";
    box.setAttribute("data-plot", plot.id);
    box.setAttribute("data-series", String(plot.series.length));
    box.setAttribute("data-color", plot.series[0] ? plot.series[0].color : "");
    var title = document.createElement("h3");
    title.textContent = plot.title;
    box.appendChild(title);
    parent.appendChild(box);
    var width = Math.max(320, Math.floor(box.clientWidth || 560));
    var xAxis = { label: plot.xLabel, labelSize: 22, size: 38 };
    if (plot.xTicks) {
      xAxis.values = function (u, splits) {
        return splits.map(function (v) { var crowded = plot.x.length > 10 && v % 2 === 1;
          return Number.isInteger(v) && !crowded && plot.xTicks[v] !== undefined ? plot.xTicks[v] : ""; });
      };
      xAxis.splits = function () { return plot.x; };
      xAxis.rotate = 0;
    }
    var options = {
      width: width,
      height: 250,
      scales: { x: { time: false }, y: { range: function (u, min, max) { return [0, max > 0 ? max * 1.1 : 1]; } } },
      axes: [xAxis, { label: plot.yLabel, labelSize: 22, size: 56 }],
      series: [{ label: plot.xTicks ? "bucket" : "time (s)" }].concat(plot.series.map(seriesOptions)),
      legend: { live: true },
      cursor: { drag: { x: true, y: false } },
      hooks: plot.markers ? { draw: [markers(section)] } : {}
    };
    if (plot.xTicks) options.scales.x.range = function () { return [-0.6, plot.x.length - 0.4]; };
    var data = [plot.x].concat(plot.series.map(function (s) { return s.values; }));
    var chart = new uPlot(options, data, box);
    box.setAttribute("data-drawn", "true");
    return chart;
  }

  var charts = [];
  model.sections.forEach(function (section, i) {
    var parent = document.querySelector('.plots[data-section="' + i + '"]');
    section.plots.forEach(function (plot) { charts.push([draw(plot, section, parent), parent]); });
  });
  window.addEventListener("resize", function () {
    charts.forEach(function (c) {
      var box = c[0].root.parentNode;
      c[0].setSize({ width: Math.max(320, Math.floor(box.clientWidth)), height: 250 });
    });
  });
  document.body.setAttribute("data-report", "drawn");
})();
`
