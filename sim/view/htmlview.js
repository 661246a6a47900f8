/* htmlview.js - the script of `ccasim view` pages (sim/view/htmlview.c
 * embeds it).  No network, no library: it decodes the page's data
 * (base64, gzip through the browser's DecompressionStream, varints),
 * draws the timeline of every run through a min/max pyramid of its change
 * points (one column per pixel; exact once a column holds one entry),
 * rebuilds the segment map at any event from the model's log (applying
 * the model's recorded decisions) and shows the peak attribution JSON.
 * Errors go to #js-errors; the figures it computed go to #figures'
 * data-* attributes, which tests read back. */
'use strict';
(function () {
  var errs = document.getElementById('js-errors');
  function report(msg) { errs.textContent += msg + '\n'; }
  window.onerror = function (msg, src, line, col) { report('error: ' + msg + ' (line ' + line + ':' + col + ')'); };
  window.addEventListener('unhandledrejection', function (e) { report('error: ' + (e.reason && e.reason.stack || e.reason)); });
  /* the page's policy (sim/util/html.c) allows its own script and style
   * alone: anything it refuses is a bug of the page, shown like an error */
  document.addEventListener('securitypolicyviolation', function (e) {
    report('error: refused by the page\'s Content-Security-Policy (' + e.violatedDirective + ')');
  });

  var META = JSON.parse(document.getElementById('meta').textContent);
  var SERIES = ['reserved', 'allocated', 'active'];
  /* a colour per run; red is kept for OOMs and caps */
  var COLOURS = ['#1f77b4', '#ff7f0e', '#2ca02c', '#9467bd', '#8c564b', '#e377c2', '#17becf', '#7f7f7f'];
  var KIND = ['segment_alloc', 'segment_free', 'segment_map', 'segment_unmap', 'alloc', 'free', 'oom'];
  var app = document.getElementById('app');

  function fmt(b) {
    var u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'], i = 0;
    var neg = b < 0; b = Math.abs(b);
    while (b >= 1024 && i < 4) { b /= 1024; i++; }
    return (neg ? '-' : '') + (i ? b.toFixed(2) : b.toFixed(0)) + ' ' + u[i];
  }
  function esc(s) { return String(s).replace(/[&<>"]/g, function (c) { return {'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;'}[c]; }); }
  function el(tag, attrs, html) {
    var e = document.createElement(tag);
    for (var k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (html !== undefined) e.innerHTML = html;
    return e;
  }

  /* ------------------------------------------------------------ decoding */
  /* the varint reader: B the bytes, P the position (module-local for
   * speed: millions of calls) */
  var B, P = 0;
  function varint() {
    var byte = B[P++];
    if (byte < 128) return byte;
    var v = byte & 0x7f, mul = 128;
    do { byte = B[P++]; v += (byte & 0x7f) * mul; mul *= 128; } while (byte & 0x80);
    return v;
  }
  function zigzag() {
    var v = varint();
    return v % 2 ? -(v + 1) / 2 : v / 2;
  }

  /* A series: change points (entry index, bytes) and a min/max pyramid
   * over them, 8 points per node. */
  function Series() {
    var n = varint();
    this.n = n;
    this.idx = new Float64Array(n);
    this.val = new Float64Array(n);
    var i = 0, v = 0;
    for (var k = 0; k < n; k++) {
      i += varint(); v += zigzag();
      this.idx[k] = i; this.val[k] = v;
    }
    this.lo = []; this.hi = [];
    var lo = this.val, hi = this.val;
    while (lo.length > 8) {
      var m = Math.ceil(lo.length / 8), nlo = new Float64Array(m), nhi = new Float64Array(m);
      for (var j = 0; j < m; j++) {
        var a = Infinity, z = -Infinity, end = Math.min(lo.length, j * 8 + 8);
        for (var q = j * 8; q < end; q++) { if (lo[q] < a) a = lo[q]; if (hi[q] > z) z = hi[q]; }
        nlo[j] = a; nhi[j] = z;
      }
      this.lo.push(nlo); this.hi.push(nhi);
      lo = nlo; hi = nhi;
    }
  }
  /* the last change point at or before entry X, -1 if none */
  Series.prototype.at = function (x) {
    var a = 0, b = this.n;
    while (a < b) { var m = (a + b) >> 1; if (this.idx[m] <= x) a = m + 1; else b = m; }
    return a - 1;
  };
  Series.prototype.value = function (x) { var k = this.at(x); return k < 0 ? 0 : this.val[k]; };
  /* min and max of points [i, j), through the pyramid: O(log n) */
  Series.prototype.rangeWalk = function (i, j, out) {
    var lo = Infinity, hi = -Infinity, L = -1, scale = 1;
    var vl = this.val, vh = this.val;
    /* ascend: consume unaligned heads and tails at each level */
    while (i < j) {
      if (L + 1 < this.lo.length && j - i >= 16) {
        while (i % 8 && i < j) { if (vl[i] < lo) lo = vl[i]; if (vh[i] > hi) hi = vh[i]; i++; }
        while (j % 8 && j > i) { j--; if (vl[j] < lo) lo = vl[j]; if (vh[j] > hi) hi = vh[j]; }
        i /= 8; j /= 8; L++;
        vl = this.lo[L]; vh = this.hi[L];
        continue;
      }
      for (; i < j; i++) { if (vl[i] < lo) lo = vl[i]; if (vh[i] > hi) hi = vh[i]; }
    }
    out.lo = lo; out.hi = hi;
    return out;
  };

  function parse(bytes) {
    B = bytes; P = 0;
    var runs = [];
    for (var k = 0; k < META.runs.length; k++) {
      var ss = [];
      for (var s = 0; s < 3; s++) ss.push(new Series());
      runs.push(ss);
    }
    var n = varint();
    var log = {
      n: n, kind: new Uint8Array(n), cause: new Float64Array(n), addr: new Float64Array(n),
      size: new Float64Array(n), stream: new Float64Array(n), stack: new Uint32Array(n), meta: new Uint32Array(n)
    };
    var cause = 0, addr = 0, K = log.kind, C = log.cause, A = log.addr, S = log.size, T = log.stream;
    for (var i = 0; i < n; i++) {
      var kd = B[P++];
      cause += zigzag(); addr += zigzag();
      K[i] = kd; C[i] = cause; A[i] = addr;
      if (kd === 5) continue;
      S[i] = varint();
      if (kd === 0 || kd === 2) T[i] = varint();
      else if (kd === 4) { T[i] = varint(); log.stack[i] = varint(); log.meta[i] = varint(); }
    }
    if (P !== bytes.length) throw new Error('data: ' + (bytes.length - P) + ' bytes left after decoding');
    return {runs: runs, log: log};
  }

  /* ------------------------------------------------------------ the page */
  var D, view, seg = {at: 0};

  function niceStep(range, ticks) {
    if (range <= 0) return 1;
    var raw = range / ticks, mag = Math.pow(10, Math.floor(Math.log10(raw))), n = raw / mag;
    return (n <= 1 ? 1 : n <= 2 ? 2 : n <= 2.5 ? 2.5 : n <= 5 ? 5 : 10) * mag;
  }
  /* the unit of an axis whose top is MAX bytes: labels and axis agree */
  function unitOf(max) {
    if (max >= 2 * 1073741824) return [1073741824, 'GiB'];
    if (max >= 2 * 1048576) return [1048576, 'MiB'];
    return [1024, 'KiB'];
  }

  function annotationsAt(e) {
    var out = [];
    META.annotations.forEach(function (a) { if (a.start <= e && e <= a.end) out.push(a.name); });
    return out;
  }

  function stackText(s) {
    if (!s) return '';
    var fr = META.stacks[s - 1].slice(0, 12).map(function (f) { return META.frames[f]; });
    return fr.join('\n') + (META.stacks[s - 1].length > 12 ? '\n…' : '');
  }

  /* the log record of the allocation that record K (alloc or free) is of */
  function allocOf(k) {
    var L = D.log;
    if (L.kind[k] === 4) return k;
    for (var j = k - 1; j >= 0; j--) if (L.kind[j] === 4 && L.addr[j] === L.addr[k]) return j;
    return -1;
  }
  function allocHtml(k, freedAt) {
    var L = D.log;
    var h = '<b>allocation</b> ' + fmt(L.size[k]) + ' at 0x' + L.addr[k].toString(16) +
      ', stream ' + L.stream[k] + ', allocated at event ' + L.cause[k];
    if (freedAt !== undefined) h += ', freed at event ' + freedAt;
    var an = annotationsAt(L.cause[k]);
    if (an.length) h += '<br>annotation: ' + esc(an.join(' › '));
    if (L.meta[k]) h += '<br>user metadata: ' + esc(META.metadata[L.meta[k] - 1]);
    if (L.stack[k]) h += '<div class="frames">' + esc(stackText(L.stack[k])) + '</div>';
    else h += '<br><i>no stack recorded</i>';
    return h;
  }
  /* the first log record caused by entry E, -1 if none */
  function firstRecord(e) {
    var c = D.log.cause, a = 0, b = D.log.n;
    while (a < b) { var m = (a + b) >> 1; if (c[m] < e) a = m + 1; else b = m; }
    return a < D.log.n && c[a] === e ? a : -1;
  }

  /* --------------------------------------------------------- timeline */
  var tl = {x0: 0, x1: 1, panels: false};
  function setupTimeline() {
    var box = document.getElementById('timeline');
    var bar = el('div', {class: 'bar'});
    bar.innerHTML = '<button id="reset">reset zoom</button> ' +
      '<label><input type="checkbox" id="panels"> one panel per run</label> ' +
      '<span id="range"></span> · wheel: zoom, drag: pan, click: segment map at that event';
    box.appendChild(bar);
    var legend = el('div', {class: 'legend bar'});
    META.runs.forEach(function (r, k) {
      var c = COLOURS[k % COLOURS.length];
      legend.innerHTML += '<span><b style="color:' + c + '">' + esc(r.label) + '</b>: ' +
        '<i style="border-color:' + c + '"></i>reserved <i style="border-color:' + c + ';opacity:.55;border-top-width:3px"></i>allocated ' +
        '<i style="border-color:' + c + ';border-top-style:dashed"></i>active · peak reserved ' + fmt(r.peak_reserved) +
        (r.n_ooms ? ', ' + r.n_ooms + ' OOM' + (r.n_ooms > 1 ? 's' : '') : '') + '</span><br>';
    });
    if (META.annotations.length) legend.innerHTML += '<span><i style="border-color:#e8d9a8;border-top-width:8px"></i>annotations (ranges of the program\'s record_function)</span>';
    box.appendChild(legend);
    var cv = el('canvas', {id: 'tl'});
    box.appendChild(cv);
    tl.cv = cv;
    tl.x1 = Math.max(META.n_events, 1);
    /* one run dwarfing the others: a panel per run */
    var peaks = META.runs.map(function (r) { return r.peak_reserved; }).filter(function (p) { return p > 0; });
    tl.panels = peaks.length > 1 && Math.max.apply(null, peaks) > 4 * Math.min.apply(null, peaks);
    document.getElementById('panels').checked = tl.panels;
    document.getElementById('panels').onchange = function (e) { tl.panels = e.target.checked; drawTimeline(); };
    document.getElementById('reset').onclick = function () { tl.x0 = 0; tl.x1 = Math.max(META.n_events, 1); drawTimeline(); };
    cv.addEventListener('wheel', function (e) {
      e.preventDefault();
      var f = e.deltaY > 0 ? 1.25 : 0.8, x = xAt(e), span = (tl.x1 - tl.x0) * f;
      span = Math.max(span, 8);
      var t = (x - tl.x0) / (tl.x1 - tl.x0);
      tl.x0 = x - t * span; tl.x1 = tl.x0 + span; clampView(); drawTimeline();
    }, {passive: false});
    var drag = null;
    cv.addEventListener('mousedown', function (e) { drag = {x: e.clientX, x0: tl.x0, x1: tl.x1, moved: false}; });
    window.addEventListener('mouseup', function (e) {
      if (drag && !drag.moved && e.target === cv) showSegments(Math.round(xAt(e)));
      drag = null;
    });
    cv.addEventListener('mousemove', function (e) {
      if (drag) {
        var dx = (e.clientX - drag.x) / (tl.W - tl.L - tl.R) * (drag.x1 - drag.x0);
        if (Math.abs(e.clientX - drag.x) > 2) drag.moved = true;
        tl.x0 = drag.x0 - dx; tl.x1 = drag.x1 - dx; clampView(); drawTimeline();
      }
      hover(e);
    });
    cv.addEventListener('mouseleave', function () { tip.style.display = 'none'; });
    window.addEventListener('resize', drawTimeline);
  }
  function clampView() {
    var n = Math.max(META.n_events, 1), span = tl.x1 - tl.x0;
    if (span > n) { tl.x0 = 0; tl.x1 = n; return; }
    if (tl.x0 < 0) { tl.x0 = 0; tl.x1 = span; }
    if (tl.x1 > n) { tl.x1 = n; tl.x0 = n - span; }
  }
  function xAt(e) {
    var r = tl.cv.getBoundingClientRect();
    var px = e.clientX - r.left - tl.L;
    return tl.x0 + px / (tl.W - tl.L - tl.R) * (tl.x1 - tl.x0);
  }

  /* the column values of series S over [x0, x1) in W columns: per column
   * [first, min, max, last] or null */
  function columns(S, x0, x1, w) {
    var cols = new Array(w), out = {};
    for (var c = 0; c < w; c++) {
      var a = x0 + (x1 - x0) * c / w, b = x0 + (x1 - x0) * (c + 1) / w;
      var ia = S.at(Math.ceil(a) - 1), ib = S.at(Math.ceil(b) - 1);
      /* value entering the column, then the points inside it */
      var first = ia < 0 ? 0 : S.val[ia];
      if (ib <= ia) { cols[c] = [first, first, first, first]; continue; }
      S.rangeWalk(ia + 1, ib + 1, out);
      cols[c] = [first, Math.min(first, out.lo), Math.max(first, out.hi), S.val[ib]];
    }
    return cols;
  }

  function drawTimeline() {
    var cv = tl.cv, dpr = window.devicePixelRatio || 1;
    var W = Math.max(600, cv.parentNode.clientWidth - 4);
    var runs = META.runs.length, panels = tl.panels ? runs : 1;
    var PH = tl.panels ? Math.max(160, Math.min(300, 520 / runs)) : 420;
    var H = 30 + panels * (PH + 18) + 30;
    cv.width = W * dpr; cv.height = H * dpr; cv.style.width = W + 'px'; cv.style.height = H + 'px';
    var g = cv.getContext('2d');
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.fillStyle = '#fff'; g.fillRect(0, 0, W, H);
    tl.W = W; tl.L = 78; tl.R = 16; tl.panelsH = [];
    var w = Math.max(1, Math.floor(W - tl.L - tl.R));
    var x0 = tl.x0, x1 = tl.x1;
    function X(e) { return tl.L + (e - x0) / (x1 - x0) * w; }
    /* annotations: bands across the top */
    g.font = '10px DejaVu Sans, sans-serif';
    META.annotations.forEach(function (a) {
      if (a.end < x0 || a.start > x1) return;
      var xa = Math.max(tl.L, X(a.start)), xb = Math.min(tl.L + w, Math.max(X(a.end), xa + 1));
      g.fillStyle = '#efe3bd'; g.fillRect(xa, 8, xb - xa, 14);
      g.fillStyle = '#f6efd9'; g.fillRect(xa, 24, xb - xa, H - 54);
      if (xb - xa > 40) { g.fillStyle = '#6b5a1f'; g.save(); g.beginPath(); g.rect(xa, 8, xb - xa, 14); g.clip(); g.fillText(a.name, xa + 2, 19); g.restore(); }
    });
    var cols = D.runs.map(function (ss) { return ss.map(function (S) { return columns(S, x0, x1, w); }); });
    for (var p = 0; p < panels; p++) {
      var top = 30 + p * (PH + 18), bottom = top + PH;
      var which = tl.panels ? [p] : META.runs.map(function (_, k) { return k; });
      var max = 0;
      which.forEach(function (k) { cols[k][0].forEach(function (c) { if (c[2] > max) max = c[2]; }); cols[k][1].forEach(function (c) { if (c[2] > max) max = c[2]; }); });
      which.forEach(function (k) { var cap = META.runs[k].cap; if (cap && cap <= 1.5 * max) max = Math.max(max, cap); });
      if (max <= 0) max = 1048576;
      var u = unitOf(max), step = niceStep(max * 1.05 / u[0], 5), ymax = Math.ceil(max * 1.05 / u[0] / step) * step * u[0];
      tl.panelsH.push({top: top, bottom: bottom, runs: which});
      var Y = function (v) { return bottom - v / ymax * PH; };
      g.strokeStyle = '#e4e4e4'; g.fillStyle = '#404040'; g.lineWidth = 1; g.font = '11px DejaVu Sans, sans-serif'; g.textAlign = 'right';
      for (var v = 0; v <= ymax / u[0] + 1e-9; v += step) {
        var y = Math.round(Y(v * u[0])) + 0.5;
        g.beginPath(); g.moveTo(tl.L, y); g.lineTo(tl.L + w, y); g.stroke();
        g.fillText((+v.toFixed(3)) + ' ' + u[1], tl.L - 6, y + 4);
      }
      if (tl.panels) { g.textAlign = 'left'; g.fillStyle = COLOURS[p % COLOURS.length]; g.fillText(META.runs[p].label, tl.L + 6, top + 12); }
      g.save(); g.beginPath(); g.rect(tl.L, top - 2, w, PH + 3); g.clip();
      which.slice().reverse().forEach(function (k) {
        var colour = COLOURS[k % COLOURS.length];
        [1, 2, 0].forEach(function (s) {
          var cs = cols[k][s];
          g.strokeStyle = colour; g.globalAlpha = s === 1 ? 0.55 : 1;
          g.lineWidth = s === 0 ? 1.8 : s === 1 ? 3 : 1; g.setLineDash(s === 2 ? [4, 3] : []);
          g.beginPath();
          for (var c = 0; c < w; c++) {
            var col = cs[c], x = tl.L + c + 0.5;
            if (c === 0) g.moveTo(x, Y(col[0])); else g.lineTo(x, Y(col[0]));
            g.lineTo(x, Y(col[1])); g.lineTo(x, Y(col[2])); g.lineTo(x, Y(col[3]));
          }
          g.stroke();
        });
        g.globalAlpha = 1; g.setLineDash([]);
        var r = META.runs[k];
        if (r.cap && r.cap <= ymax) {
          g.strokeStyle = '#d62728'; g.setLineDash([8, 4]); g.beginPath(); g.moveTo(tl.L, Y(r.cap)); g.lineTo(tl.L + w, Y(r.cap)); g.stroke(); g.setLineDash([]);
          g.fillStyle = '#d62728'; g.textAlign = 'left'; g.fillText('cap ' + fmt(r.cap), tl.L + 4, Y(r.cap) - 4);
        }
        /* OOMs: red crosses at the reserved line */
        g.strokeStyle = '#d62728'; g.lineWidth = 1.5;
        r.ooms.forEach(function (e) {
          if (e < x0 || e > x1) return;
          var x = X(e), y = Y(D.runs[k][0].value(e));
          g.beginPath(); g.moveTo(x - 4, y - 4); g.lineTo(x + 4, y + 4); g.moveTo(x - 4, y + 4); g.lineTo(x + 4, y - 4); g.stroke();
        });
        /* the reserved peak */
        if (r.peak_reserved_event >= x0 && r.peak_reserved_event <= x1) {
          var px = X(r.peak_reserved_event + 0.5), py = Y(r.peak_reserved);
          g.fillStyle = colour; g.beginPath(); g.arc(px, py, 3.5, 0, 2 * Math.PI); g.fill();
          g.textAlign = px > tl.L + w - 160 ? 'right' : 'left'; g.fillStyle = '#202020';
          g.fillText('peak ' + fmt(r.peak_reserved), px + (g.textAlign === 'left' ? 6 : -6), py - 6 - 13 * which.indexOf(k));
        }
      });
      g.restore();
      g.strokeStyle = '#404040'; g.beginPath(); g.moveTo(tl.L, bottom + 0.5); g.lineTo(tl.L + w, bottom + 0.5); g.stroke();
    }
    /* x axis */
    var xs = niceStep(x1 - x0, 8), bottomAll = 30 + panels * (PH + 18) - 18;
    g.fillStyle = '#404040'; g.textAlign = 'center'; g.font = '11px DejaVu Sans, sans-serif';
    for (var e = Math.ceil(x0 / xs) * xs; e <= x1; e += xs) g.fillText(e >= 1e6 ? (e / 1e6) + 'M' : e >= 1e3 ? (e / 1e3) + 'k' : String(e), X(e), bottomAll + 14);
    g.fillText('trace event', tl.L + w / 2, bottomAll + 30);
    if (seg.shown !== undefined && seg.shown >= x0 && seg.shown <= x1) {
      g.strokeStyle = '#000'; g.setLineDash([2, 2]); g.beginPath(); g.moveTo(X(seg.shown + 0.5), 24); g.lineTo(X(seg.shown + 0.5), bottomAll); g.stroke(); g.setLineDash([]);
    }
    document.getElementById('range').textContent = 'events ' + Math.floor(x0) + '–' + Math.ceil(x1) + ' of ' + META.n_events;
  }

  var tip;
  function hover(e) {
    var r = tl.cv.getBoundingClientRect(), px = e.clientX - r.left;
    if (px < tl.L || px > tl.W - tl.R) { tip.style.display = 'none'; return; }
    var x = xAt(e), w = tl.W - tl.L - tl.R, perPx = (tl.x1 - tl.x0) / w;
    var ev = Math.floor(x);
    var h = '<b>event ' + ev + '</b>' + (perPx > 1 ? ' (one pixel: ' + Math.round(perPx) + ' events; zoom in for each)' : '') + '<table><tr><th></th><th>reserved</th><th>allocated</th><th>active</th></tr>';
    META.runs.forEach(function (run, k) {
      h += '<tr><td style="color:' + COLOURS[k % COLOURS.length] + '">' + esc(run.label) + '</td>';
      for (var s = 0; s < 3; s++) h += '<td>' + fmt(D.runs[k][s].value(ev)) + '</td>';
      h += '</tr>';
    });
    h += '</table>';
    var k = firstRecord(ev), L = D.log;
    for (var n = 0; k >= 0 && k < L.n && L.cause[k] === ev && n < 4; k++, n++) {
      var kd = L.kind[k];
      if (kd === 4) h += '<hr>' + allocHtml(k);
      else if (kd === 5) { var a = allocOf(k); h += '<hr>free of ' + (a >= 0 ? allocHtml(a, ev) : fmt(L.size[k])); }
      else if (kd === 6) h += '<hr><b style="color:#d62728">OOM</b>: a request of ' + fmt(L.size[k]);
      else h += '<hr>' + KIND[kd] + ' ' + fmt(L.size[k]) + ' at 0x' + L.addr[k].toString(16);
    }
    var an = annotationsAt(ev);
    if (an.length && h.indexOf('annotation:') < 0) h += '<br>annotation: ' + esc(an.join(' › '));
    showTip(e, h);
  }
  function showTip(e, h) {
    tip.innerHTML = h; tip.style.display = 'block';
    var x = e.pageX + 14, maxX = window.scrollX + window.innerWidth - tip.offsetWidth - 8;
    tip.style.left = Math.min(x, maxX) + 'px'; tip.style.top = (e.pageY + 14) + 'px';
  }

  /* ------------------------------------------------------ segment map */
  /* The state after entry K: the model's segments (mapped runs of an
   * expandable segment merged) and live blocks, by address. */
  function stateAt(K) {
    var L = D.log, segs = new Map(), blocks = new Map(), mapped = [];
    for (var i = 0; i < L.n && L.cause[i] <= K; i++) {
      var a = L.addr[i];
      switch (L.kind[i]) {
        case 0: segs.set(a, {addr: a, size: L.size[i], stream: L.stream[i], exp: false}); break;
        case 1: segs.delete(a); break;
        case 2: mapped.push({addr: a, size: L.size[i], stream: L.stream[i], exp: true}); break;
        case 3: mapped = unmap(mapped, a, L.size[i]); break;
        case 4: blocks.set(a, i); break;
        case 5: blocks.delete(a); break;
      }
    }
    mapped.sort(function (x, y) { return x.addr - y.addr; });
    var runs = [];
    mapped.forEach(function (m) {
      var last = runs[runs.length - 1];
      if (last && last.addr + last.size === m.addr && last.stream === m.stream) last.size += m.size;
      else runs.push({addr: m.addr, size: m.size, stream: m.stream, exp: true});
    });
    var all = Array.from(segs.values()).concat(runs).sort(function (x, y) { return x.addr - y.addr; });
    var bl = Array.from(blocks.values()).sort(function (x, y) { return L.addr[x] - L.addr[y]; });
    var j = 0;
    all.forEach(function (s) {
      s.blocks = [];
      while (j < bl.length && L.addr[bl[j]] < s.addr) j++;
      while (j < bl.length && L.addr[bl[j]] < s.addr + s.size) s.blocks.push(bl[j++]);
      s.live = s.blocks.reduce(function (t, b) { return t + L.size[b]; }, 0);
    });
    return all;
  }
  function unmap(list, a, size) {
    var out = [];
    list.forEach(function (m) {
      var e = m.addr + m.size, ue = a + size;
      if (ue <= m.addr || a >= e) { out.push(m); return; }
      if (m.addr < a) out.push({addr: m.addr, size: a - m.addr, stream: m.stream, exp: true});
      if (ue < e) out.push({addr: ue, size: e - ue, stream: m.stream, exp: true});
    });
    return out;
  }

  var MAXROWS = 600;
  function setupSegments() {
    var box = document.getElementById('segments');
    var bar = el('div', {class: 'bar'});
    bar.innerHTML = 'after event <input id="segat" type="number" min="0" style="width:9em"> <button id="seggo">show</button> ' +
      '<button id="segpeak">at the reserved peak</button> <button id="segapeak">at the allocated peak</button> ' +
      '<button id="segoom">at the first OOM</button> <span id="segsum"></span>';
    box.appendChild(bar);
    box.appendChild(el('div', {class: 'sub'}, 'Segments in address order (a row each; an expandable segment\'s mapped runs merged), each bar spanning the full width: ' +
      '<span style="color:#4c72b0">■</span> live blocks, <span style="color:#ff9d9a">■</span> free beside live blocks, <span style="color:#c9c9c9">■</span> free segment. Hover a block for its allocation. Rows after the first ' + MAXROWS + ' are left out.'));
    var scroll = el('div', {id: 'segscroll'});
    var cv = el('canvas', {id: 'segmap'});
    scroll.appendChild(cv); box.appendChild(scroll);
    seg.cv = cv;
    document.getElementById('seggo').onclick = function () { showSegments(+document.getElementById('segat').value); };
    document.getElementById('segpeak').onclick = function () { showSegments(META.runs[0].peak_reserved_event); };
    document.getElementById('segapeak').onclick = function () { showSegments(META.runs[0].peak_allocated_event); };
    var oomBtn = document.getElementById('segoom');
    if (!META.runs[0].ooms.length) oomBtn.disabled = true;
    oomBtn.onclick = function () { showSegments(META.runs[0].ooms[0]); };
    cv.addEventListener('mousemove', segHover);
    cv.addEventListener('mouseleave', function () { tip.style.display = 'none'; });
  }
  function showSegments(K) {
    K = Math.max(0, Math.min(K, META.n_events - 1));
    document.getElementById('segat').value = K;
    seg.shown = K;
    seg.state = stateAt(K);
    var L = D.log, cv = seg.cv, dpr = window.devicePixelRatio || 1;
    var rows = seg.state.slice(0, MAXROWS), RH = rows.length > 120 ? 10 : 16;
    var W = Math.max(600, cv.parentNode.clientWidth - 20), H = Math.max(20, rows.length * RH + 4);
    cv.width = W * dpr; cv.height = H * dpr; cv.style.width = W + 'px'; cv.style.height = H + 'px';
    var g = cv.getContext('2d'); g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.fillStyle = '#fff'; g.fillRect(0, 0, W, H);
    var LW = 230, bx0 = LW, bx1 = W - 120;
    seg.geom = {RH: RH, bx0: bx0, bx1: bx1};
    var reserved = 0, live = 0, stranded = 0;
    seg.state.forEach(function (s) { reserved += s.size; live += s.live; if (s.live) stranded += s.size - s.live; });
    g.font = (RH > 12 ? 11 : 9) + 'px DejaVu Sans Mono, monospace';
    rows.forEach(function (s, i) {
      var y = i * RH + 2, h = RH - 3;
      if (i % 2 === 0) { g.fillStyle = '#f6f6f6'; g.fillRect(0, i * RH, W, RH); }
      g.fillStyle = s.live ? '#ff9d9a' : '#c9c9c9'; g.fillRect(bx0, y, bx1 - bx0, h);
      g.fillStyle = '#4c72b0';
      s.blocks.forEach(function (b) {
        var xa = bx0 + (L.addr[b] - s.addr) / s.size * (bx1 - bx0), xw = Math.max(1, L.size[b] / s.size * (bx1 - bx0));
        g.fillRect(xa, y, xw, h);
      });
      g.fillStyle = '#ffffff';
      s.blocks.forEach(function (b) {
        var xa = bx0 + (L.addr[b] - s.addr) / s.size * (bx1 - bx0);
        if (L.size[b] / s.size * (bx1 - bx0) >= 4) g.fillRect(xa, y, 0.75, h);
      });
      g.fillStyle = '#202020'; g.textAlign = 'left';
      g.fillText('0x' + s.addr.toString(16) + ' ' + fmt(s.size) + (s.exp ? ' exp' : ''), 4, y + h - 1);
      g.textAlign = 'right'; g.fillText(fmt(s.size - s.live) + ' free', W - 4, y + h - 1);
    });
    document.getElementById('segsum').textContent = 'after event ' + K + ': ' + seg.state.length + ' segments, ' + fmt(reserved) +
      ' reserved, ' + fmt(live) + ' in live blocks, ' + fmt(stranded) + ' free beside live blocks';
    var fig = document.getElementById('figures');
    fig.setAttribute('data-segments-at', K);
    fig.setAttribute('data-segments', seg.state.length);
    fig.setAttribute('data-segments-reserved', reserved);
    if (D) drawTimeline();
  }
  function segHover(e) {
    if (!seg.state) return;
    var r = seg.cv.getBoundingClientRect(), x = e.clientX - r.left, y = e.clientY - r.top;
    var G = seg.geom, row = Math.floor(y / G.RH), s = seg.state[row];
    if (!s || x < G.bx0 || x > G.bx1) { tip.style.display = 'none'; return; }
    var addr = s.addr + (x - G.bx0) / (G.bx1 - G.bx0) * s.size, L = D.log, hit = -1;
    s.blocks.forEach(function (b) { if (L.addr[b] <= addr && addr < L.addr[b] + L.size[b]) hit = b; });
    var h = '0x' + s.addr.toString(16) + ': ' + fmt(s.size) + (s.exp ? ' expandable' : '') + ' segment, stream ' + s.stream + ', ' +
      s.blocks.length + ' live block(s), ' + fmt(s.size - s.live) + ' free';
    if (hit >= 0) h += '<hr>' + allocHtml(hit);
    showTip(e, h);
  }

  /* ------------------------------------------------- peak attribution */
  function renderPeak() {
    var box = document.getElementById('peak');
    if (!META.peak) {
      box.appendChild(el('p', {class: 'none'}, 'No peak attribution in this page: write one with <code>ccasim peak TRACE --json &gt; peak.json</code> ' +
        'and pass it with <code>ccasim view TRACE --peak peak.json</code>.'));
      return;
    }
    box.appendChild(renderValue(META.peak, 0));
  }
  /* byte counts by their key: not the counts of blocks, segments or events */
  function isBytesKey(k) { return !/blocks$|count$|segments$|event|time/i.test(k) && /bytes|size|reserved|allocated|free|active|^live$/i.test(k); }
  function scalar(k, v) {
    if (typeof v === 'number' && isBytesKey(k) && v >= 1024) return '<span class="num" title="' + v + ' B">' + fmt(v) + '</span>';
    if (typeof v === 'number') return '<span class="num">' + v + '</span>';
    if (v === null) return '';
    if (Array.isArray(v) && !v.length) return '';
    if (Array.isArray(v) && typeof v[0] !== 'object') return v.slice(0, 200).map(function (x) { return scalar(k, x); }).join(', ');
    if (typeof v === 'object') return compact(v);
    return esc(v);
  }
  /* an object, or a list of objects: what shows as a table, not inline */
  function tabular(x) { return x !== null && typeof x === 'object' && !(Array.isArray(x) && typeof x[0] !== 'object'); }
  /* an object in a table cell: a line per field, nested values shortened */
  function compact(v) {
    if (Array.isArray(v)) return v.slice(0, 20).map(compact).join('<hr>') + (v.length > 20 ? '<br><span class="none">' + (v.length - 20) + ' more</span>' : '');
    return Object.keys(v).map(function (k) {
      var shown = tabular(v[k]) ? esc(JSON.stringify(v[k]).slice(0, 200)) : scalar(k, v[k]);
      return shown === '' ? '' : esc(k) + ': ' + shown;
    }).filter(function (line) { return line; }).join('<br>');
  }
  /* a row that holds tables of its own (a moment's groups, its segments) */
  function nested(o) { return Object.keys(o).some(function (k) { return tabular(o[k]); }); }
  function renderValue(v, depth) {
    var div = el('div');
    if (Array.isArray(v)) {
      if (!v.length) { div.innerHTML = '<span class="none">none</span>'; return div; }
      if (typeof v[0] !== 'object' || v[0] === null) { div.innerHTML = v.slice(0, 200).map(function (x) { return scalar('', x); }).join(', '); return div; }
      if (depth <= 1 && v.some(nested)) {
        /* a section per row, titled by its kind and event where it has them */
        v.slice(0, 50).forEach(function (o, i) {
          var title = [o.kind, o.event !== undefined ? 'event ' + o.event : ''].filter(function (x) { return x; }).join(', ') || '#' + (i + 1);
          div.appendChild(el('h4', {}, esc(title)));
          div.appendChild(renderValue(o, depth + 1));
        });
        if (v.length > 50) div.appendChild(el('p', {class: 'none'}, (v.length - 50) + ' more left out'));
        return div;
      }
      var keys = [];
      v.slice(0, 50).forEach(function (o) { Object.keys(o).forEach(function (k) { if (keys.indexOf(k) < 0) keys.push(k); }); });
      var t = '<table><tr>' + keys.map(function (k) { return '<th>' + esc(k) + '</th>'; }).join('') + '</tr>';
      v.slice(0, 200).forEach(function (o) {
        t += '<tr>' + keys.map(function (k) {
          var x = o[k];
          if (Array.isArray(x) && x.every(function (f) { return typeof f === 'string'; })) return '<td><div class="frames" style="white-space:pre;font-family:monospace;font-size:11px">' + esc(x.slice(0, 8).join('\n')) + '</div></td>';
          return '<td>' + scalar(k, x) + '</td>';
        }).join('') + '</tr>';
      });
      div.innerHTML = t + '</table>' + (v.length > 200 ? '<p class="none">' + (v.length - 200) + ' more rows left out</p>' : '');
      return div;
    }
    if (v && typeof v === 'object') {
      var simple = Object.keys(v).filter(function (k) { return v[k] === null || typeof v[k] !== 'object'; });
      if (simple.length) {
        div.innerHTML = '<table>' + simple.map(function (k) { return '<tr><th>' + esc(k) + '</th><td>' + scalar(k, v[k]) + '</td></tr>'; }).join('') + '</table>';
      }
      Object.keys(v).filter(function (k) { return v[k] !== null && typeof v[k] === 'object'; }).forEach(function (k) {
        var body = depth < 6 ? renderValue(v[k], depth + 1) : el('pre', {}, esc(JSON.stringify(v[k]).slice(0, 2000)));
        if (Array.isArray(v[k]) && v[k].length > 8) {
          /* a long list folds away: the page stays a page */
          var det = el('details');
          det.appendChild(el('summary', {}, esc(k) + ' (' + v[k].length + ')'));
          det.appendChild(body);
          div.appendChild(det);
          return;
        }
        div.appendChild(el(depth < 2 ? 'h3' : 'h4', {}, esc(k)));
        div.appendChild(body);
      });
      return div;
    }
    div.innerHTML = scalar('', v);
    return div;
  }

  /* --------------------------------------------------------------- main */
  function start(bytes) {
    var t0 = performance.now();
    D = parse(bytes);
    var t1 = performance.now();
    app.innerHTML = '';
    app.appendChild(el('div', {class: 'sub'}, esc(META.trace) + ', device ' + META.device + ': ' + META.n_events + ' events, ' +
      META.runs.length + ' run' + (META.runs.length > 1 ? 's' : '') + '; ' + D.log.n + ' model events'));
    var fig = el('div', {id: 'figures', hidden: ''});
    app.appendChild(fig);
    app.appendChild(el('h2', {}, 'Memory over the trace'));
    app.appendChild(el('div', {id: 'timeline'}));
    app.appendChild(el('h2', {}, 'Segment map'));
    app.appendChild(el('div', {id: 'segments'}));
    app.appendChild(el('h2', {}, 'Peak attribution'));
    app.appendChild(el('section', {id: 'peak'}));
    tip = el('div', {id: 'tip'});
    document.body.appendChild(tip);
    /* the figures the page computed, for tests and readers */
    D.runs.forEach(function (ss, k) {
      var R = ss[0], peak = 0, at = 0;
      for (var i = 0; i < R.n; i++) if (R.val[i] > peak) { peak = R.val[i]; at = R.idx[i]; }
      fig.setAttribute('data-peak-reserved-' + k, peak);
      fig.setAttribute('data-peak-reserved-event-' + k, at);
      var A = ss[1], pa = 0;
      for (var j = 0; j < A.n; j++) if (A.val[j] > pa) pa = A.val[j];
      fig.setAttribute('data-peak-allocated-' + k, pa);
    });
    setupTimeline();
    setupSegments();
    renderPeak();
    drawTimeline();
    showSegments(META.runs[0].peak_reserved_event);
    var t2 = performance.now();
    app.setAttribute('data-status', 'ready');
    console.log('ccasim view: ready ' + Math.round(t2) + ' ms after navigation: data ' + Math.round(t0 - T0) +
      ' ms, decode ' + Math.round(t1 - t0) + ' ms, draw ' + Math.round(t2 - t1) + ' ms');
  }

  /* the browser decodes: a data: URL (whitespace is ignored in its
   * base64) through fetch, then gzip through DecompressionStream */
  var T0 = performance.now();
  fetch('data:application/octet-stream;base64,' + document.getElementById('data').textContent)
    .then(function (r) { return new Response(r.body.pipeThrough(new DecompressionStream('gzip'))).arrayBuffer(); })
    .then(function (buf) { start(new Uint8Array(buf)); })
    .catch(function (e) { report('error: ' + (e && e.stack || e)); app.setAttribute('data-status', 'failed'); });
})();
