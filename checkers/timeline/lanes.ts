/**
 * The lane chart both op pages draw (the timeline and the linearizability page): one lane per process,
 * every op a bar from its invocation to its completion on a real time axis (the history's times), fault
 * windows as labelled bands, zoomable, with the process labels and the axis always in view.
 *
 * Ops are drawn on a canvas, and only those in view, so a page stays fast at 100k ops; the few things a
 * reader (or a test) looks for are DOM elements: the fault bands (`.ln-band`), the focused op
 * (`.ln-focus`) and the legend in the real colours. A page opens scrolled to its focus op, or to the op
 * named by `#op=N` in the URL (N is the op's number everywhere: its invocation's event index).
 *
 * The data is columnar (one array per field) to keep 100k-op pages small.
 */

/** One class of bars: its colours and what it means (the legend). */
export interface LaneClass {
  name: string;
  fill: string;
  stroke: string;
  /** Dashed outline: the op never completed or its outcome is unknown. */
  dashed?: boolean;
  legend: string;
}

export interface LaneBand {
  label: string;
  /** µs since the run started. */
  s: number;
  e: number;
  landed: boolean;
}

export interface LaneData {
  /** Rows, top to bottom: `process 7` with its node. */
  lanes: { name: string; sub: string }[];
  /** Per op (parallel arrays): lane index, start and end in µs since the run started (-1: never ended), class, label, op number. */
  lane: number[];
  s: number[];
  e: number[];
  c: number[];
  t: string[];
  n: number[];
  /** Tooltip details for some ops, by op index. */
  dt: Record<number, string>;
  classes: LaneClass[];
  bands: LaneBand[];
  /** End of the history, µs. */
  end: number;
  /** Index of the op to open at, or -1. */
  focus: number;
  /** Ops to keep in view with the focus op (the ops its explanation rests on), by index. */
  context?: number[];
}

/** Lane data with its rows, classes and bands, and no ops yet (the pages push them). */
export function emptyLaneData(lanes: LaneData['lanes'], classes: LaneClass[], bands: LaneBand[]): LaneData {
  return { lanes, lane: [], s: [], e: [], c: [], t: [], n: [], dt: {}, classes, bands, end: 0, focus: -1 };
}

/** Nanoseconds → the µs integers the data carries. */
export const toMicros = (ns: number): number => Math.round(ns / 1000);

export const LANES_STYLE = `
.ln{margin:6px 0 18px}
.ln-bar{display:flex;flex-wrap:wrap;gap:6px 14px;align-items:center;margin:4px 0 6px;font-size:12px}
.ln-bar button{font:inherit;padding:1px 8px;cursor:pointer}
.ln-legend{display:flex;flex-wrap:wrap;gap:4px 12px}
.ln-sw{display:inline-block;width:18px;height:11px;border:1px solid;vertical-align:-1px;margin-right:4px}
.ln-sw.dash{border-style:dashed}
.ln-scroll{position:relative;overflow:auto;border:1px solid #ccc;background:#fff;max-height:calc(100vh - 140px)}
.ln-sizer{position:relative}
.ln-canvas{position:absolute;left:0;top:0;z-index:1}
.ln-band{position:absolute;z-index:0;background:rgba(240,150,30,.16);border-left:1px dashed #d08020;border-right:1px dashed #d08020;pointer-events:none}
.ln-band.notlanded{background:rgba(150,150,150,.12);border-color:#999}
.ln-focus{position:absolute;z-index:3;border:3px solid #1565c0;border-radius:4px;pointer-events:none;box-shadow:0 0 0 3px rgba(21,101,192,.25)}
.ln-tip{position:fixed;display:none;z-index:10;background:#fff;border:1px solid #888;padding:6px 8px;max-width:560px;box-shadow:2px 2px 6px rgba(0,0,0,.2);font-size:12px;white-space:pre-wrap;pointer-events:none}
`;

// Plain ES5-style script (no template literals) so it embeds in a TypeScript template string as is.
export const LANES_SCRIPT = `
(function () {
  var LABEL_W = 170, ROW = 22, AXIS_H = 42, BAR_H = 15, MAX_W = 3e7;
  function clamp(v, a, b) { return Math.max(a, Math.min(b, v)); }
  function niceStep(raw) {
    var mag = Math.pow(10, Math.floor(Math.log10(raw)));
    var m = [1, 2, 5, 10].find(function (k) { return k * mag >= raw; });
    return (m || 10) * mag;
  }
  function fmtS(us, step) {
    var d = Math.max(0, Math.min(6, Math.ceil(-Math.log10(step / 1e6))));
    return (us / 1e6).toFixed(d) + ' s';
  }
  function fmtExact(us) { return (us / 1e6).toFixed(6) + ' s'; }
  var tip = null;
  function tipEl() {
    if (!tip) { tip = document.createElement('div'); tip.className = 'ln-tip'; document.body.appendChild(tip); }
    return tip;
  }
  function Lanes(root, d, opts) {
    this.root = root; this.d = d; this.opts = opts || {};
    var n = d.s.length, self = this;
    this.byLane = d.lanes.map(function () { return []; });
    for (var i = 0; i < n; i++) this.byLane[d.lane[i]].push(i);
    this.byLane.forEach(function (l) { l.sort(function (a, b) { return d.s[a] - d.s[b]; }); });
    this.byNum = new Map();
    for (var j = 0; j < n; j++) this.byNum.set(d.n[j], j);
    var minS = Infinity;
    for (var k = 0; k < n; k++) if (d.s[k] < minS) minS = d.s[k];
    d.bands.forEach(function (b) { if (b.s < minS) minS = b.s; });
    this.t0 = !isFinite(minS) || minS < 5e6 ? 0 : minS;
    this.tEnd = Math.max(d.end, this.t0 + 1);
    var durs = [];
    for (var q = 0; q < n; q += Math.max(1, Math.floor(n / 2000))) if (d.e[q] >= 0) durs.push(d.e[q] - d.s[q]);
    durs.sort(function (a, b) { return a - b; });
    this.median = durs.length ? Math.max(1, durs[Math.floor(durs.length / 2)]) : 1000;
    this.build();
    this.scale = this.defaultScale();
    this.layout();
    this.focusIndex = -1;
    window.addEventListener('resize', function () { self.draw(); });
  }
  Lanes.prototype.build = function () {
    var d = this.d, self = this, root = this.root;
    var bar = document.createElement('div'); bar.className = 'ln-bar';
    function btn(text, title, fn) { var b = document.createElement('button'); b.type = 'button'; b.textContent = text; b.title = title; b.onclick = fn; bar.appendChild(b); return b; }
    btn('−', 'zoom out (or Ctrl+wheel)', function () { self.zoom(1 / 2); });
    btn('+', 'zoom in (or Ctrl+wheel)', function () { self.zoom(2); });
    btn('fit', 'whole run in view', function () { self.setScale(self.fitScale(), 0); self.scroller.scrollLeft = 0; });
    if (d.focus >= 0) btn(this.opts.focusButton || 'failing op', 'scroll to the op this page is about', function () { self.focus(d.focus, true); });
    var legend = document.createElement('span'); legend.className = 'ln-legend';
    d.classes.forEach(function (c) {
      var s = document.createElement('span'), sw = document.createElement('span');
      sw.className = 'ln-sw' + (c.dashed ? ' dash' : ''); sw.style.background = c.fill; sw.style.borderColor = c.stroke;
      s.appendChild(sw); s.appendChild(document.createTextNode(c.legend)); legend.appendChild(s);
    });
    if (d.bands.length) {
      var s2 = document.createElement('span'), sw2 = document.createElement('span');
      sw2.className = 'ln-sw'; sw2.style.background = 'rgba(240,150,30,.35)'; sw2.style.borderColor = '#d08020';
      s2.appendChild(sw2); s2.appendChild(document.createTextNode('fault window')); legend.appendChild(s2);
    }
    bar.appendChild(legend);
    root.appendChild(bar);
    var scroller = document.createElement('div'); scroller.className = 'ln-scroll';
    var sizer = document.createElement('div'); sizer.className = 'ln-sizer';
    var canvas = document.createElement('canvas'); canvas.className = 'ln-canvas';
    sizer.appendChild(canvas); scroller.appendChild(sizer); root.appendChild(scroller);
    this.scroller = scroller; this.sizer = sizer; this.canvas = canvas;
    this.bandEls = d.bands.map(function (b) {
      var el = document.createElement('div'); el.className = 'ln-band' + (b.landed ? '' : ' notlanded');
      el.setAttribute('data-label', b.label); el.title = b.label; sizer.appendChild(el); return el;
    });
    this.focusEl = document.createElement('div'); this.focusEl.className = 'ln-focus'; this.focusEl.style.display = 'none';
    sizer.appendChild(this.focusEl);
    scroller.addEventListener('scroll', function () { self.draw(); });
    scroller.addEventListener('wheel', function (ev) {
      if (!ev.ctrlKey && !ev.metaKey) return;
      ev.preventDefault();
      var r = scroller.getBoundingClientRect();
      self.zoom(ev.deltaY < 0 ? 1.25 : 0.8, ev.clientX - r.left);
    }, { passive: false });
    canvas.addEventListener('mousemove', function (ev) { self.hover(ev); });
    canvas.addEventListener('mouseleave', function () { tipEl().style.display = 'none'; });
    canvas.addEventListener('click', function (ev) {
      var i = self.opAt(ev);
      if (i >= 0) { history.replaceState(null, '', '#op=' + d.n[i]); self.focus(i, false); }
    });
  };
  Lanes.prototype.x = function (us) { return LABEL_W + (us - this.t0) * this.scale; };
  Lanes.prototype.fitScale = function () {
    var w = Math.max(200, this.scroller.clientWidth - LABEL_W - 30);
    return w / (this.tEnd - this.t0);
  };
  // At most 5 px per µs, and never wider than the browser can lay out.
  Lanes.prototype.maxScale = function () { return Math.min(5, MAX_W / (this.tEnd - this.t0)); };
  Lanes.prototype.defaultScale = function () {
    // Readable: the median op about 36 px wide, but never wider than the browser allows.
    var s = 36 / this.median;
    return clamp(s, this.fitScale(), this.maxScale());
  };
  Lanes.prototype.setScale = function (s, anchorPx) {
    var sc = this.scroller, t = this.t0 + (sc.scrollLeft + anchorPx - LABEL_W) / this.scale;
    this.scale = clamp(s, this.fitScale(), this.maxScale());
    this.layout();
    sc.scrollLeft = Math.max(0, this.x(t) - anchorPx);
    this.draw();
  };
  Lanes.prototype.zoom = function (f, anchorPx) {
    this.setScale(this.scale * f, anchorPx === undefined ? this.scroller.clientWidth / 2 : anchorPx);
  };
  Lanes.prototype.layout = function () {
    var d = this.d, self = this;
    var W = Math.ceil(this.x(this.tEnd) + 40), H = AXIS_H + d.lanes.length * ROW + 8;
    this.sizer.style.width = W + 'px'; this.sizer.style.height = H + 'px';
    this.bandEls.forEach(function (el, i) {
      var b = d.bands[i], x0 = self.x(b.s), x1 = self.x(b.e);
      el.style.left = x0 + 'px'; el.style.width = Math.max(2, x1 - x0) + 'px';
      el.style.top = AXIS_H + 'px'; el.style.height = (H - AXIS_H) + 'px';
    });
    this.placeFocus();
  };
  Lanes.prototype.barOf = function (i) {
    var d = this.d, x0 = this.x(d.s[i]), x1 = this.x(d.e[i] >= 0 ? d.e[i] : this.tEnd);
    return { x: x0, w: Math.max(2, x1 - x0), y: AXIS_H + d.lane[i] * ROW + (ROW - BAR_H) / 2 };
  };
  Lanes.prototype.placeFocus = function () {
    var el = this.focusEl, i = this.focusIndex;
    if (i < 0) { el.style.display = 'none'; return; }
    var b = this.barOf(i);
    el.style.display = 'block';
    el.style.left = (b.x - 4) + 'px'; el.style.top = (b.y - 4) + 'px';
    el.style.width = (Math.max(b.w, 8) + 2) + 'px'; el.style.height = (BAR_H + 2) + 'px';
    el.setAttribute('data-op', String(this.d.n[i]));
  };
  // Focus op i: highlight it, zoom so that it and the ops of context (indices) are in view with it
  // readable, and scroll it into the middle of the view (and of the page).
  Lanes.prototype.focus = function (i, smooth, context) {
    var d = this.d, sc = this.scroller;
    this.focusIndex = i;
    var end = function (k) { return d.e[k] >= 0 ? d.e[k] : d.s[k]; };
    var dur = Math.max(1, (d.e[i] >= 0 ? d.e[i] : this.tEnd) - d.s[i]);
    var lo = d.s[i], hi = end(i) > lo ? end(i) : lo + dur;
    (context || []).concat(i === d.focus ? d.context || [] : []).forEach(function (k) { if (k >= 0 && k < d.s.length) { lo = Math.min(lo, d.s[k]); hi = Math.max(hi, end(k)); } });
    var viewW = Math.max(200, sc.clientWidth - LABEL_W - 40);
    var want = Math.min(260, 24 + 6.2 * (d.t[i] || '').length);
    // With context: all of it in view; alone: the op wide enough for its label, with room around it.
    var s = hi - lo > dur ? viewW / ((hi - lo) * 1.3) : Math.min(want / dur, viewW / (6 * dur));
    this.scale = clamp(Math.max(s, 24 / dur), this.fitScale(), this.maxScale());
    this.layout();
    var b = this.barOf(i);
    this.placeFocus();
    var mid = this.x((lo + hi) / 2);
    if (b.x < mid - viewW / 2 || b.x + b.w > mid + viewW / 2) mid = b.x + b.w / 2;
    sc.scrollLeft = Math.max(0, mid - LABEL_W - (sc.clientWidth - LABEL_W) / 2);
    sc.scrollTop = Math.max(0, b.y - AXIS_H - (sc.clientHeight - AXIS_H) / 2);
    var r = sc.getBoundingClientRect();
    if (r.top < 0 || r.bottom > window.innerHeight) window.scrollBy({ top: r.top - 60, behavior: smooth ? 'smooth' : 'auto' });
    this.draw();
  };
  // Focus the op numbered num (its event index), keeping the ops numbered in related in view.
  Lanes.prototype.focusNumber = function (num, related) {
    var i = this.byNum.get(num), self = this;
    if (i === undefined) return false;
    var ctx = (related || []).map(function (n) { var k = self.byNum.get(n); return k === undefined ? -1 : k; });
    this.focus(i, false, related && related.length ? ctx : undefined);
    return true;
  };
  Lanes.prototype.firstIn = function (list, t) {
    // Ops of one process never overlap: the first op ending after t starts at or before the last one starting before t.
    var lo = 0, hi = list.length, s = this.d.s;
    while (lo < hi) { var mid = (lo + hi) >> 1; if (s[list[mid]] <= t) lo = mid + 1; else hi = mid; }
    return Math.max(0, lo - 1);
  };
  Lanes.prototype.draw = function () {
    var d = this.d, sc = this.scroller, c = this.canvas, dpr = window.devicePixelRatio || 1;
    var vw = sc.clientWidth, vh = Math.min(sc.clientHeight, AXIS_H + d.lanes.length * ROW + 8);
    c.style.left = sc.scrollLeft + 'px'; c.style.top = sc.scrollTop + 'px';
    c.style.width = vw + 'px'; c.style.height = vh + 'px';
    if (c.width !== Math.round(vw * dpr) || c.height !== Math.round(vh * dpr)) { c.width = Math.round(vw * dpr); c.height = Math.round(vh * dpr); }
    var g = c.getContext('2d');
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, vw, vh);
    g.font = '11px sans-serif'; g.textBaseline = 'middle';
    var left = sc.scrollLeft, top = sc.scrollTop, self = this;
    var tA = this.t0 + (left - LABEL_W) / this.scale, tB = this.t0 + (left + vw) / this.scale;
    var first = Math.max(0, Math.floor(top / ROW)), last = Math.min(d.lanes.length - 1, Math.floor((top + vh - AXIS_H) / ROW));
    // Bars.
    for (var L = first; L <= last; L++) {
      var list = this.byLane[L];
      for (var k = this.firstIn(list, tA); k < list.length; k++) {
        var i = list[k];
        if (d.s[i] > tB) break;
        var b = this.barOf(i), cls = d.classes[d.c[i]];
        var x = b.x - left, y = b.y - top;
        if (x + b.w < LABEL_W || y + BAR_H < AXIS_H) continue;
        g.fillStyle = cls.fill; g.fillRect(x, y, b.w, BAR_H);
        g.strokeStyle = cls.stroke; g.lineWidth = i === this.focusIndex ? 2 : 1;
        g.setLineDash(cls.dashed ? [4, 3] : []);
        g.strokeRect(x + 0.5, y + 0.5, b.w - 1, BAR_H - 1);
        var label = d.t[i];
        if (label && b.w > 24) {
          var tx = Math.max(x + 3, LABEL_W + 3), room = x + b.w - tx - 3;
          if (room > 18) {
            g.fillStyle = '#111';
            var fits = Math.floor(room / 6.2);
            g.fillText(label.length > fits ? label.slice(0, Math.max(1, fits - 1)) + '…' : label, tx, y + BAR_H / 2 + 0.5);
          }
        }
      }
    }
    g.setLineDash([]);
    // Axis: opaque header with ticks and the fault windows' labels.
    g.fillStyle = '#f7f7f7'; g.fillRect(0, 0, vw, AXIS_H);
    g.strokeStyle = '#bbb'; g.beginPath(); g.moveTo(0, AXIS_H - 0.5); g.lineTo(vw, AXIS_H - 0.5); g.stroke();
    var step = niceStep(110 / this.scale);
    g.fillStyle = '#333'; g.strokeStyle = '#999';
    for (var t = Math.ceil(tA / step) * step; t <= tB; t += step) {
      var tx2 = this.x(t) - left;
      if (tx2 < LABEL_W) continue;
      g.beginPath(); g.moveTo(tx2 + 0.5, 14); g.lineTo(tx2 + 0.5, 20); g.stroke();
      g.fillText(fmtS(t, step), tx2 + 3, 8);
    }
    d.bands.forEach(function (bd) {
      var x0 = Math.max(self.x(bd.s) - left, LABEL_W), x1 = self.x(bd.e) - left;
      if (x1 < LABEL_W || x0 > vw) return;
      g.fillStyle = bd.landed ? 'rgba(240,150,30,.35)' : 'rgba(150,150,150,.3)'; g.fillRect(x0, 22, x1 - x0, 17);
      g.fillStyle = '#5a3300';
      var room = Math.min(x1, vw) - x0 - 6, fits = Math.floor(room / 6.2);
      if (fits > 3) g.fillText(bd.label.length > fits ? bd.label.slice(0, fits - 1) + '…' : bd.label, x0 + 4, 31);
    });
    // Sticky process labels.
    g.fillStyle = '#f7f7f7'; g.fillRect(0, 0, LABEL_W, vh);
    g.strokeStyle = '#bbb'; g.beginPath(); g.moveTo(LABEL_W - 0.5, 0); g.lineTo(LABEL_W - 0.5, vh); g.stroke();
    g.fillStyle = '#555'; g.fillText('time since run start →', 6, 8); g.fillText('fault windows', 6, 31);
    for (var L2 = first; L2 <= last; L2++) {
      var ly = AXIS_H + L2 * ROW - top + ROW / 2;
      if (ly < AXIS_H) continue;
      var ln = d.lanes[L2];
      g.fillStyle = '#111'; g.fillText(ln.name, 6, ly);
      if (ln.sub) { g.fillStyle = '#1565c0'; g.fillText(ln.sub, 6 + g.measureText(ln.name).width + 6, ly); }
    }
  };
  Lanes.prototype.opAt = function (ev) {
    var d = this.d, sc = this.scroller, r = this.canvas.getBoundingClientRect();
    var cx = sc.scrollLeft + ev.clientX - r.left, cy = sc.scrollTop + ev.clientY - r.top;
    if (ev.clientX - r.left < LABEL_W || ev.clientY - r.top < AXIS_H) return -1;
    var L = Math.floor((cy - AXIS_H) / ROW);
    if (L < 0 || L >= d.lanes.length) return -1;
    var t = this.t0 + (cx - LABEL_W) / this.scale, list = this.byLane[L], slack = 3 / this.scale;
    for (var k = this.firstIn(list, t + slack); k < list.length; k++) {
      var i = list[k];
      if (d.s[i] > t + slack) break;
      var e = d.e[i] >= 0 ? d.e[i] : this.tEnd;
      if (t >= d.s[i] - slack && t <= Math.max(e, d.s[i] + 2 / this.scale) + slack) return i;
    }
    return -1;
  };
  Lanes.prototype.hover = function (ev) {
    var d = this.d, i = this.opAt(ev), tp = tipEl(), r = this.canvas.getBoundingClientRect();
    var text = '';
    if (i >= 0) {
      text = 'op ' + d.n[i] + ' (history.jsonl index ' + d.n[i] + ')\\n' + d.lanes[d.lane[i]].name + (d.lanes[d.lane[i]].sub ? ' on ' + d.lanes[d.lane[i]].sub : '') + '\\n' + d.t[i] +
        '\\ninvoked ' + fmtExact(d.s[i]) + (d.e[i] >= 0 ? ', ended ' + fmtExact(d.e[i]) + ' (' + ((d.e[i] - d.s[i]) / 1000).toFixed(3) + ' ms)' : ', never ended') +
        '\\n' + d.classes[d.c[i]].legend + (d.dt[i] ? '\\n' + d.dt[i] : '');
    } else if (ev.clientY - r.top < AXIS_H) {
      var t = this.t0 + (this.scroller.scrollLeft + ev.clientX - r.left - LABEL_W) / this.scale;
      d.bands.forEach(function (b) { if (t >= b.s && t <= b.e) text += (text ? '\\n' : '') + b.label + ' (' + fmtExact(b.s) + ' – ' + fmtExact(b.e) + ')'; });
    }
    if (!text) { tp.style.display = 'none'; return; }
    tp.textContent = text; tp.style.display = 'block';
    tp.style.left = Math.min(ev.clientX + 14, window.innerWidth - 420) + 'px'; tp.style.top = (ev.clientY + 14) + 'px';
  };
  window.faultlineLanes = function (root, d, opts) { return new Lanes(root, d, opts); };
  /** The op number in the URL (#op=N), or null. */
  window.faultlineHashOp = function () {
    var m = /(?:^#|&)op=(\\d+)/.exec(location.hash);
    return m ? Number(m[1]) : null;
  };
  /** Ops to show with it (#op=N&ctx=A,B), by number. */
  window.faultlineHashContext = function () {
    var m = /&ctx=([\\d,]+)/.exec(location.hash);
    return m ? m[1].split(',').filter(Boolean).map(Number) : [];
  };
})();
`;

/** JSON for a `<script type="application/json">` block: never closes the script element early. */
export function embedJson(v: unknown): string {
  return JSON.stringify(v).replace(/</g, '\\u003c');
}
