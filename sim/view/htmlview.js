/* htmlview.js - the script of `ccasim view` pages (sim/view/htmlview.c
 * embeds it).  No network, no library: it decodes the page's data
 * (base64, gzip through the browser's DecompressionStream, varints),
 * draws the timeline of every run through a min/max pyramid of its change
 * points (one column per pixel; exact once a column holds one entry),
 * and, from the model's log of each snapshot (applying the model's
 * recorded decisions, deciding nothing), every allocation as a band over
 * time, the segments over time, the segment map at any event, a flame
 * graph of the live bytes at any event, a search over the allocations and
 * the peak attribution in words.  Categories (parameters, gradients,
 * optimizer state, activations, temporaries) are inferred as
 * doc/view.md "Categories" says.  Errors go to #js-errors; the figures it
 * computed go to #figures' data-* attributes, which tests read back, and
 * window.ccasimView lets a test drive it.
 * long-file: one page's script, inlined whole by htmlview.c (the page
 * loads nothing), so its decoding and every view live in this file. */
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
  /* a colour per run; red is kept for OOMs and caps */
  var COLOURS = ['#1f77b4', '#ff7f0e', '#2ca02c', '#9467bd', '#8c564b', '#e377c2', '#17becf', '#7f7f7f'];
  var KIND = ['segment_alloc', 'segment_free', 'segment_map', 'segment_unmap', 'alloc', 'free', 'oom'];
  var CATS = ['parameters', 'gradients', 'optimizer state', 'activations', 'temporaries', 'other'];
  var CAT_COLOURS = ['#4c72b0', '#dd8452', '#55a868', '#c44e52', '#8172b3', '#a0a0a0'];
  var app = document.getElementById('app');
  var RANKS = META.logs.length > 1;

  function fmt(b) {
    var u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'], i = 0;
    var neg = b < 0; b = Math.abs(b);
    while (b >= 1024 && i < 4) { b /= 1024; i++; }
    return (neg ? '-' : '') + (i ? b.toFixed(2) : b.toFixed(0)) + ' ' + u[i];
  }
  function pct(a, b) { return b ? (100 * a / b).toFixed(1) + ' %' : '-'; }
  function esc(s) { return String(s).replace(/[&<>"']/g, function (c) { return {'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;'}[c]; }); }
  function el(tag, attrs, html) {
    var e = document.createElement(tag);
    for (var k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (html !== undefined) e.innerHTML = html;
    return e;
  }
  function $(id) { return document.getElementById(id); }
  function fig(name, v) { $('figures').setAttribute('data-' + name, v); }
  function hidpi(cv, W, H) {
    var dpr = window.devicePixelRatio || 1;
    cv.width = W * dpr; cv.height = H * dpr; cv.style.width = W + 'px'; cv.style.height = H + 'px';
    var g = cv.getContext('2d'); g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.fillStyle = '#fff'; g.fillRect(0, 0, W, H);
    return g;
  }
  function evLabel(e) { return e >= 1e6 ? (e / 1e6) + 'M' : e >= 1e3 ? (e / 1e3) + 'k' : String(e); }

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
    if (v < 2147483648) return (v >>> 1) ^ -(v & 1);
    return v % 2 ? -(v + 1) / 2 : v / 2;
  }

  /* A series of N change points (entry index, bytes), decoded from B at
   * P, the first SHARED of them those of series FROM (the active series
   * shares the allocated one's up to the first block that waited for its
   * stream: htmlview.c), and a min/max pyramid over them, 8 points per
   * node. */
  function Series(n, from, shared) {
    this.n = n;
    this.idx = new Uint32Array(n);
    this.val = new Float64Array(n);
    var i = 0, v = 0, k = 0;
    if (shared) {
      this.idx.set(from.idx.subarray(0, shared)); this.val.set(from.val.subarray(0, shared));
      k = shared; i = from.idx[k - 1]; v = from.val[k - 1];
    }
    for (; k < n; k++) {
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
    var lo = Infinity, hi = -Infinity, L = -1;
    var vl = this.val, vh = this.val;
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

  /* One snapshot's log of model records (htmlview.c's layout), with what
   * the page derives from it: each alloc's free record and category. */
  function Log(lm) {
    var n = lm.count;
    this.n = n; this.meta = lm;
    var K = this.kind = new Uint8Array(n), C = this.cause = new Uint32Array(n);
    var A = this.addr = new Float64Array(n), S = this.size = new Float64Array(n);
    var X = this.extra = new Uint32Array(n); /* block size - request */
    var T = this.stream = new Uint8Array(n), ST = this.stack = new Uint32Array(n), MD = this.md = new Uint32Array(n);
    var streams = this.streams = [], sidx = new Map(), lastV = -1, lastK = 0;
    function stream(v) {
      if (v === lastV) return lastK;
      var k = sidx.get(v);
      if (k === undefined) { k = streams.length; streams.push(v); sidx.set(v, k); }
      lastV = v; lastK = k;
      return k;
    }
    /* each alloc's free record (-1: live at the end) */
    var F = this.freeAt = new Int32Array(n).fill(-1);
    var cause = 0, addr = 0, pageGcd = 0;
    function gcd(a, b) { while (b) { var t = a % b; a = b; b = t; } return a; }
    for (var i = 0; i < n; i++) {
      var kd = B[P++];
      cause += zigzag();
      K[i] = kd; C[i] = cause;
      if (kd === 5) {
        /* a free: its alloc's record has the address */
        var back = varint();
        if (back) { F[i - back] = i; addr = A[i - back]; } else addr += zigzag();
        A[i] = addr;
        continue;
      }
      addr += zigzag();
      A[i] = addr;
      S[i] = varint();
      if (kd === 0 || kd === 2) { T[i] = stream(varint()); if (kd === 2) pageGcd = gcd(S[i], pageGcd); }
      else if (kd === 4) { X[i] = zigzag(); T[i] = stream(varint()); ST[i] = varint(); MD[i] = varint(); }
    }
    this.page = pageGcd;
    this.categorise();
  }
  Log.prototype.block = function (k) { return this.size[k] + this.extra[k]; };
  /* the first record caused by entry E or later */
  Log.prototype.lowerBound = function (e) {
    var c = this.cause, a = 0, b = this.n;
    while (a < b) { var m = (a + b) >> 1; if (c[m] < e) a = m + 1; else b = m; }
    return a;
  };
  Log.prototype.stackText = function (s, max) {
    if (!s) return '';
    var lm = this.meta, st = lm.stacks[s - 1], m = max || 12;
    var fr = st.slice(0, m).map(function (f) { return lm.frames[f]; });
    return fr.join('\n') + (st.length > m ? '\n…' : '');
  };
  Log.prototype.annotationsAt = function (e) {
    var out = [];
    this.meta.annotations.forEach(function (a) { if (a.start <= e && e <= a.end) out.push(a.name); });
    return out;
  };

  /* ---------------------------------------------------- categories */
  /* The phase of the program an allocation was made in, from the
   * record_function ranges open then and its Python stack (doc/view.md,
   * "Categories"); 0 none, 1 init, 2 forward, 3 backward, 4 optimizer. */
  var PH_NONE = 0, PH_INIT = 1, PH_FWD = 2, PH_BWD = 3, PH_OPT = 4;
  function phaseOfText(t) {
    if (/optimi[sz]er|torch\/optim\/|\bstep#|zero_grad/i.test(t)) return PH_OPT;
    if (/backward|torch\/autograd\//i.test(t)) return PH_BWD;
    if (/(^|\n)(_apply|convert|reset_parameters|_load_from_state_dict|load_state_dict|to|cuda|__init__) \(.*torch\/nn\/|torch\/nn\/(parameter|init)\.py|^(\w+\.)?(init|load|setup)/i.test(t)) return PH_INIT;
    if (/(^|\n)(forward|_call_impl|_wrapped_call_impl|_conv_forward) \(|torch\/nn\/functional\.py|^(\w+\.)?forward/i.test(t)) return PH_FWD;
    return PH_NONE;
  }
  Log.prototype.categorise = function () {
    var n = this.n, lm = this.meta, K = this.kind, C = this.cause, ST = this.stack, F = this.freeAt;
    var self = this;
    var byStack = new Int8Array(lm.stacks.length + 1).fill(-1);
    var anyStack = lm.stacks.length > 0;
    /* annotation phases as sorted ranges, swept in cause order */
    var ranges = lm.annotations.map(function (a) { return {s: a.start, e: a.end, p: phaseOfText(a.name)}; })
      .filter(function (r) { return r.p; }).sort(function (x, y) { return x.s - y.s; });
    var ri = 0, openR = [];
    var phase = new Uint8Array(n), inst = new Uint32Array(n), cat = this.cat = new Uint8Array(n);
    var curPhase = -1, curInst = 0, lastInst = new Uint32Array(n);
    for (var i = 0; i < n; i++) {
      var c = C[i];
      if (ranges.length) {
        /* a range of another phase begins a new phase, allocs or not
         * (even one that ends before the next record) */
        while (ri < ranges.length && ranges[ri].s <= c) {
          var rg = ranges[ri++];
          openR.push(rg);
          if (rg.p !== curPhase) { curPhase = rg.p; curInst++; }
        }
        if (openR.length) openR = openR.filter(function (r) { return r.e >= c; });
      }
      var ap = PH_NONE;
      for (var q = openR.length - 1; q >= 0 && !ap; q--) ap = openR[q].p;
      if (K[i] === 4) {
        var p = ap;
        if (!p && ST[i]) {
          if (byStack[ST[i]] < 0) byStack[ST[i]] = phaseOfText(self.stackText(ST[i], 1000));
          p = byStack[ST[i]];
        }
        /* a request with no Python frame while the trace records them:
         * made by C++ off the Python thread, the autograd engine's */
        if (!p && !ST[i] && anyStack && c > 0) p = PH_BWD;
        if (p !== curPhase) { curPhase = p; curInst++; }
        phase[i] = p; inst[i] = curInst;
      }
      lastInst[i] = curInst;
    }
    /* a block that outlives the phase it was made in (freed in a later
     * phase, or never) is state of that phase; the others temporaries */
    for (var k = 0; k < n; k++) {
      if (K[k] !== 4) continue;
      var outlives = F[k] < 0 || lastInst[F[k]] !== inst[k];
      switch (phase[k]) {
        case PH_INIT: cat[k] = 0; break;
        case PH_BWD: cat[k] = outlives ? 1 : 4; break;
        case PH_OPT: cat[k] = outlives ? 2 : 4; break;
        case PH_FWD: cat[k] = outlives ? 3 : 4; break;
        default: cat[k] = 5;
      }
    }
  };

  /* The data's frames (htmlview.c's layout): each stream's bytes, one
   * array each (a frame's bytes are views of BYTES until joined). */
  function streams(bytes) {
    B = bytes; P = 0;
    var parts = [];
    while (P < bytes.length) {
      var id = varint(), len = varint();
      if (P + len > bytes.length) throw new Error('data: a frame of ' + len + ' bytes past the end');
      (parts[id] = parts[id] || []).push(bytes.subarray(P, P + len));
      P += len;
    }
    return parts.map(function (ps) {
      if (ps.length === 1) return ps[0];
      var total = 0; ps.forEach(function (p) { total += p.length; });
      var out = new Uint8Array(total), o = 0;
      ps.forEach(function (p) { out.set(p, o); o += p.length; });
      return out;
    });
  }
  var EMPTY = new Uint8Array(0);
  /* reads stream K of ST with READ(); all of it must be read */
  function decodeStream(st, k, read) {
    B = st[k] || EMPTY; P = 0;
    var v = read();
    if (P !== B.length) throw new Error('data: ' + (B.length - P) + ' bytes left after decoding stream ' + k);
    return v;
  }
  function parse(bytes) {
    var st = streams(bytes);
    bytes = null;
    var runs = [];
    META.runs.forEach(function (r, k) {
      var ss = [];
      for (var s = 0; s < 3; s++) {
        ss.push(decodeStream(st, 4 * k + s, function () {
          var n = r.counts[s];
          if (s === 2 && r.active_shared === n) return ss[1];
          return s === 2 ? new Series(n, ss[1], r.active_shared) : new Series(n);
        }));
        st[4 * k + s] = null;
      }
      runs.push(ss);
    });
    var logs = META.logs.map(function (lm) {
      var L = decodeStream(st, 4 * lm.run + 3, function () { return new Log(lm); });
      st[4 * lm.run + 3] = null;
      return L;
    });
    return {runs: runs, logs: logs};
  }

  /* ------------------------------------------------------------ state */
  var D, cur = 0, tip, pinned = -1;
  function LG() { return D.logs[cur]; }
  function RUN0() { return META.runs[META.logs[cur].run]; }

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
  function yAxis(g, L, w, top, PH, ymax) {
    var u = unitOf(ymax), step = niceStep(ymax / u[0], 5);
    g.strokeStyle = '#e4e4e4'; g.fillStyle = '#404040'; g.lineWidth = 1; g.font = '11px DejaVu Sans, sans-serif'; g.textAlign = 'right';
    for (var v = 0; v <= ymax / u[0] + 1e-9; v += step) {
      var y = Math.round(top + PH - v * u[0] / ymax * PH) + 0.5;
      g.beginPath(); g.moveTo(L, y); g.lineTo(L + w, y); g.stroke();
      g.fillText((+v.toFixed(3)) + ' ' + u[1], L - 6, y + 4);
    }
  }
  function niceMax(max) {
    if (max <= 0) return 1048576;
    var u = unitOf(max), step = niceStep(max * 1.05 / u[0], 5);
    return Math.ceil(max * 1.05 / u[0] / step) * step * u[0];
  }
  function xAxis(g, L, w, y, x0, x1) {
    var xs = niceStep(x1 - x0, 8);
    g.fillStyle = '#404040'; g.textAlign = 'center'; g.font = '11px DejaVu Sans, sans-serif';
    for (var e = Math.ceil(x0 / xs) * xs; e <= x1; e += xs) g.fillText(evLabel(e), L + (e - x0) / (x1 - x0) * w, y + 14);
  }

  /* the log record of the allocation that record K (alloc or free) is of */
  function allocOf(L, k) {
    if (L.kind[k] === 4) return k;
    for (var j = k - 1; j >= 0; j--) if (L.kind[j] === 4 && L.addr[j] === L.addr[k]) return j;
    return -1;
  }
  function allocHtml(L, k) {
    var f = L.freeAt[k], blk = L.block(k);
    var h = '<b>allocation</b> ' + fmt(L.size[k]) + (blk !== L.size[k] ? ' (block ' + fmt(blk) + ')' : '') +
      ' at 0x' + L.addr[k].toString(16) + ', stream ' + L.streams[L.stream[k]] +
      '<br>allocated at event ' + L.cause[k] + ', ' + (f >= 0 ? 'freed at event ' + L.cause[f] : 'never freed in the trace') +
      '<br>category: <b style="color:' + CAT_COLOURS[L.cat[k]] + '">' + CATS[L.cat[k]] + '</b>';
    var an = L.annotationsAt(L.cause[k]);
    if (an.length) h += '<br>annotation: ' + esc(an.join(' › '));
    if (L.md[k]) h += '<br>user metadata: ' + esc(L.meta.metadata[L.md[k] - 1]);
    if (L.stack[k]) h += '<div class="frames">' + esc(L.stackText(L.stack[k])) + '</div>';
    else h += '<br><i>no Python stack recorded</i>';
    return h;
  }
  function showTip(e, h) {
    tip.innerHTML = h; tip.style.display = 'block';
    var x = e.pageX + 14, maxX = window.scrollX + window.innerWidth - tip.offsetWidth - 8;
    tip.style.left = Math.max(0, Math.min(x, maxX)) + 'px'; tip.style.top = (e.pageY + 14) + 'px';
  }
  function hideTip() { tip.style.display = 'none'; }

  /* ------------------------------------------------------ ranks */
  function renderRanks() {
    var box = $('ranks');
    var rows = META.runs.map(function (r, k) { return {k: k, r: r}; });
    var peaks = rows.map(function (x) { return x.r.peak_reserved; });
    var max = Math.max.apply(null, peaks), min = Math.min.apply(null, peaks);
    var sorted = peaks.slice().sort(function (a, b) { return a - b; });
    var med = sorted.length % 2 ? sorted[(sorted.length - 1) / 2] : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2;
    var top = peaks.indexOf(max);
    var t = '<table class="data"><tr><th>rank</th><th>events</th><th>peak reserved</th><th>after event</th><th>peak allocated</th><th>OOMs</th><th>vs the median</th></tr>';
    rows.forEach(function (x) {
      var r = x.r;
      t += '<tr' + (x.k === top ? ' class="top"' : '') + '><td style="color:' + COLOURS[x.k % COLOURS.length] + '">' + esc(r.label) + '</td><td>' + r.n_events +
        '</td><td>' + fmt(r.peak_reserved) + '</td><td>' + r.peak_reserved_event + '</td><td>' + fmt(r.peak_allocated) + '</td><td>' + r.n_ooms +
        '</td><td>' + (med ? (r.peak_reserved >= med ? '+' : '') + (100 * (r.peak_reserved - med) / med).toFixed(1) + ' %' : '-') + '</td></tr>';
    });
    var skew = min ? (max - min) / min : 0;
    box.innerHTML = '<p><b>' + esc(META.runs[top].label) + '</b> peaks: ' + fmt(max) + ' reserved, ' + fmt(max - min) +
      ' (' + (100 * skew).toFixed(1) + ' %) above the lowest rank (' + fmt(min) + ') and ' + fmt(max - med) + ' above the median (' + fmt(med) + ').</p>' + t + '</table>';
    fig('peak-rank', top);
    fig('rank-skew', (100 * skew).toFixed(2));
    var sel = $('rank');
    META.logs.forEach(function (lm, i) { sel.appendChild(el('option', {value: i}, esc(META.runs[lm.run].label))); });
    sel.onchange = function () { cur = +sel.value; pinned = -1; rankChanged(); };
  }

  /* --------------------------------------------------------- timeline */
  var tl = {x0: 0, x1: 1, panels: false};
  function setupTimeline() {
    var box = $('timeline');
    var bar = el('div', {class: 'bar'});
    bar.innerHTML = '<button id="reset">reset zoom</button> ' +
      '<label><input type="checkbox" id="panels"> one panel per run</label> ' +
      '<span id="range"></span> · wheel: zoom, drag: pan, click: segment map and flame graph at that event, double-click: allocations around it';
    box.appendChild(bar);
    var legend = el('div', {class: 'legend bar'});
    META.runs.forEach(function (r, k) {
      var c = COLOURS[k % COLOURS.length];
      legend.innerHTML += '<span><b style="color:' + c + '">' + esc(r.label) + '</b>: ' +
        '<i style="border-color:' + c + '"></i>reserved <i style="border-color:' + c + ';opacity:.55;border-top-width:3px"></i>allocated ' +
        '<i style="border-color:' + c + ';border-top-style:dashed"></i>active · peak reserved ' + fmt(r.peak_reserved) +
        (r.n_ooms ? ', ' + r.n_ooms + ' OOM' + (r.n_ooms > 1 ? 's' : '') : '') +
        (r.stopped_by_oom ? ', <b style="color:#d62728">stopped by an OOM after event ' + r.end + '</b>' : r.diverged ? ', stopped after event ' + r.end + ' (the model left the recording)' : '') + '</span><br>';
    });
    if (!RANKS && META.logs[0].annotations.length) legend.innerHTML += '<span><i style="border-color:#e8d9a8;border-top-width:8px"></i>annotations (ranges of the program\'s record_function)</span>';
    box.appendChild(legend);
    var cv = el('canvas', {id: 'tl'});
    box.appendChild(cv);
    tl.cv = cv;
    tl.x1 = Math.max(META.n_events, 1);
    /* one run dwarfing the others, or ranks: a panel per run */
    var peaks = META.runs.map(function (r) { return r.peak_reserved; }).filter(function (p) { return p > 0; });
    tl.panels = RANKS || (peaks.length > 1 && Math.max.apply(null, peaks) > 4 * Math.min.apply(null, peaks));
    $('panels').checked = tl.panels;
    $('panels').onchange = function (e) { tl.panels = e.target.checked; drawTimeline(); };
    $('reset').onclick = function () { tl.x0 = 0; tl.x1 = Math.max(META.n_events, 1); drawTimeline(); };
    zoomable(cv, tl, function () { return tl.W - tl.L - tl.R; }, drawTimeline, function (x) {
      var e = Math.round(x); showSegments(e); showFlame(e, 'event ' + e);
    });
    cv.addEventListener('dblclick', function (e) { var x = Math.round(xAt(tl, e)); bandsAround(x); });
    cv.addEventListener('mousemove', function (e) { if (!tl.dragging) hover(e); });
    cv.addEventListener('mouseleave', hideTip);
    window.addEventListener('resize', function () { drawTimeline(); drawBands(); drawSegTime(); });
  }
  /* wheel zoom and drag pan of view V (x0, x1, L) on canvas CV; CLICK(x)
   * on a click that did not drag */
  function zoomable(cv, V, width, draw, click) {
    cv.addEventListener('wheel', function (e) {
      e.preventDefault();
      var f = e.deltaY > 0 ? 1.25 : 0.8, x = xAt(V, e), span = Math.max((V.x1 - V.x0) * f, 8);
      var t = (x - V.x0) / (V.x1 - V.x0);
      V.x0 = x - t * span; V.x1 = V.x0 + span; clampView(V); draw();
    }, {passive: false});
    var drag = null;
    cv.addEventListener('mousedown', function (e) { drag = {x: e.clientX, x0: V.x0, x1: V.x1, moved: false}; });
    window.addEventListener('mouseup', function (e) {
      if (drag && !drag.moved && e.target === cv && click) click(xAt(V, e), e);
      drag = null; V.dragging = false;
    });
    cv.addEventListener('mousemove', function (e) {
      if (!drag) return;
      var dx = (e.clientX - drag.x) / width() * (drag.x1 - drag.x0);
      if (Math.abs(e.clientX - drag.x) > 2) { drag.moved = true; V.dragging = true; }
      if (!drag.moved) return;
      V.x0 = drag.x0 - dx; V.x1 = drag.x1 - dx; clampView(V); draw();
    });
  }
  function clampView(V) {
    var n = Math.max(META.n_events, 1), span = V.x1 - V.x0;
    if (span > n) { V.x0 = 0; V.x1 = n; return; }
    if (V.x0 < 0) { V.x0 = 0; V.x1 = span; }
    if (V.x1 > n) { V.x1 = n; V.x0 = n - span; }
  }
  function xAt(V, e) {
    var cv = e.target && e.target.tagName === 'CANVAS' ? e.target : V.cv;
    var r = cv.getBoundingClientRect();
    var px = e.clientX - r.left - V.L;
    return V.x0 + px / (V.W - V.L - V.R) * (V.x1 - V.x0);
  }

  /* the column values of series S over [x0, x1) in W columns, up to
   * entry END: per column [first, min, max, last], or null past END */
  function columns(S, x0, x1, w, end) {
    var cols = new Array(w), out = {};
    for (var c = 0; c < w; c++) {
      var a = x0 + (x1 - x0) * c / w, b = x0 + (x1 - x0) * (c + 1) / w;
      if (Math.ceil(a) - 1 > end) { cols[c] = null; continue; }
      var ia = S.at(Math.ceil(a) - 1), ib = S.at(Math.min(Math.ceil(b) - 1, end));
      var first = ia < 0 ? 0 : S.val[ia];
      if (ib <= ia) { cols[c] = [first, first, first, first]; continue; }
      S.rangeWalk(ia + 1, ib + 1, out);
      cols[c] = [first, Math.min(first, out.lo), Math.max(first, out.hi), S.val[ib]];
    }
    return cols;
  }

  /* places labels {x, y, text, colour} so that no two overlap: each
   * moves up (then down) by a line until it is clear of those placed */
  function placeLabels(g, labels, top, bottom) {
    var placed = [];
    labels.sort(function (a, b) { return b.prio - a.prio; }).forEach(function (l) {
      var w = g.measureText(l.text).width + 4, h = 13;
      var x = l.x + 6 + w > l.maxX ? l.x - 6 - w : l.x + 6;
      var y0 = l.y - 6;
      for (var k = 0; k < 40; k++) {
        var y = y0 + (k % 2 ? 1 : -1) * Math.ceil(k / 2) * h;
        if (y - h < top || y > bottom) continue;
        var clash = placed.some(function (p) { return x < p.x + p.w && p.x < x + w && y - h < p.y && p.y - h < y; });
        if (!clash) { placed.push({x: x, y: y, w: w}); l.px = x; l.py = y; break; }
      }
    });
    labels.forEach(function (l) {
      if (l.px === undefined) return;
      g.fillStyle = 'rgba(255,255,255,.8)'; g.fillRect(l.px, l.py - 11, g.measureText(l.text).width + 4, 13);
      g.fillStyle = l.colour; g.textAlign = 'left'; g.fillText(l.text, l.px + 2, l.py);
      if (Math.abs(l.py - (l.y - 6)) > 1) { g.strokeStyle = l.colour; g.lineWidth = 0.7; g.beginPath(); g.moveTo(l.x, l.y); g.lineTo(l.px < l.x ? l.px + g.measureText(l.text).width + 4 : l.px, l.py - 4); g.stroke(); }
    });
  }

  function drawTimeline() {
    var cv = tl.cv;
    var W = Math.max(600, cv.parentNode.clientWidth - 4);
    var runs = META.runs.length, panels = tl.panels ? runs : 1;
    var PH = tl.panels ? Math.max(RANKS ? 90 : 160, Math.min(300, 520 / runs)) : 420;
    var H = 30 + panels * (PH + 18) + 30;
    var g = hidpi(cv, W, H);
    tl.W = W; tl.L = 78; tl.R = 16; tl.panelsH = [];
    var w = Math.max(1, Math.floor(W - tl.L - tl.R));
    var x0 = tl.x0, x1 = tl.x1;
    function X(e) { return tl.L + (e - x0) / (x1 - x0) * w; }
    g.font = '10px DejaVu Sans, sans-serif';
    if (!RANKS) META.logs[0].annotations.forEach(function (a) {
      if (a.end < x0 || a.start > x1) return;
      var xa = Math.max(tl.L, X(a.start)), xb = Math.min(tl.L + w, Math.max(X(a.end), xa + 1));
      g.fillStyle = '#efe3bd'; g.fillRect(xa, 8, xb - xa, 14);
      g.fillStyle = '#f6efd9'; g.fillRect(xa, 24, xb - xa, H - 54);
      if (xb - xa > 40) { g.fillStyle = '#6b5a1f'; g.save(); g.beginPath(); g.rect(xa, 8, xb - xa, 14); g.clip(); g.fillText(a.name, xa + 2, 19); g.restore(); }
    });
    /* the window of the allocation views */
    if (bv.x1 > bv.x0 && (bv.x0 > 0 || bv.x1 < META.n_events)) {
      var wa = Math.max(tl.L, X(bv.x0)), wb = Math.min(tl.L + w, Math.max(X(bv.x1), wa + 2));
      g.fillStyle = 'rgba(76,114,176,.10)'; g.fillRect(wa, 24, wb - wa, H - 54);
    }
    var cols = D.runs.map(function (ss, k) { return ss.map(function (S) { return columns(S, x0, x1, w, META.runs[k].end); }); });
    /* ranks share one axis */
    var shared = 0;
    if (RANKS) cols.forEach(function (cs) { cs[0].forEach(function (c) { if (c && c[2] > shared) shared = c[2]; }); });
    for (var p = 0; p < panels; p++) {
      var top = 30 + p * (PH + 18), bottom = top + PH;
      var which = tl.panels ? [p] : META.runs.map(function (_, k) { return k; });
      var max = shared;
      which.forEach(function (k) { [0, 1].forEach(function (s) { cols[k][s].forEach(function (c) { if (c && c[2] > max) max = c[2]; }); }); });
      which.forEach(function (k) {
        var r = META.runs[k];
        if (r.cap && r.cap <= 1.5 * max) max = Math.max(max, r.cap);
        if (r.device_memory && r.device_memory <= 1.5 * max) max = Math.max(max, r.device_memory);
      });
      var ymax = niceMax(max);
      tl.panelsH.push({top: top, bottom: bottom, runs: which});
      var Y = function (v) { return bottom - v / ymax * PH; };
      yAxis(g, tl.L, w, top, PH, ymax);
      if (tl.panels) { g.textAlign = 'left'; g.fillStyle = COLOURS[p % COLOURS.length]; g.font = '11px DejaVu Sans, sans-serif'; g.fillText(META.runs[p].label, tl.L + 6, top + 12); }
      g.save(); g.beginPath(); g.rect(tl.L, top - 2, w, PH + 3); g.clip();
      var labels = [];
      which.slice().reverse().forEach(function (k) {
        var colour = COLOURS[k % COLOURS.length], r = META.runs[k];
        [1, 2, 0].forEach(function (s) {
          var cs = cols[k][s];
          g.strokeStyle = colour; g.globalAlpha = s === 1 ? 0.55 : 1;
          g.lineWidth = s === 0 ? 1.8 : s === 1 ? 3 : 1; g.setLineDash(s === 2 ? [4, 3] : []);
          g.beginPath();
          var started = false;
          for (var c = 0; c < w; c++) {
            var col = cs[c], x = tl.L + c + 0.5;
            if (!col) break;
            if (!started) { g.moveTo(x, Y(col[0])); started = true; } else g.lineTo(x, Y(col[0]));
            g.lineTo(x, Y(col[1])); g.lineTo(x, Y(col[2])); g.lineTo(x, Y(col[3]));
          }
          g.stroke();
        });
        g.globalAlpha = 1; g.setLineDash([]);
        [['cap', r.cap, '#d62728', [8, 4]], ['device memory', r.device_memory, '#7f0000', [2, 3]]].forEach(function (lim) {
          if (!lim[1] || lim[1] > ymax) return;
          g.strokeStyle = lim[2]; g.lineWidth = 1.2; g.setLineDash(lim[3]); g.beginPath(); g.moveTo(tl.L, Y(lim[1])); g.lineTo(tl.L + w, Y(lim[1])); g.stroke(); g.setLineDash([]);
          labels.push({x: tl.L + 2, y: Y(lim[1]) + 2, text: lim[0] + ' ' + fmt(lim[1]), colour: lim[2], maxX: tl.L + w, prio: 1});
        });
        /* OOMs: red crosses at the reserved line */
        g.strokeStyle = '#d62728'; g.lineWidth = 1.5;
        r.ooms.forEach(function (e) {
          if (e < x0 || e > x1) return;
          var x = X(e), y = Y(D.runs[k][0].value(e));
          g.beginPath(); g.moveTo(x - 4, y - 4); g.lineTo(x + 4, y + 4); g.moveTo(x - 4, y + 4); g.lineTo(x + 4, y - 4); g.stroke();
        });
        if (r.stopped_by_oom && r.end >= x0 && r.end <= x1) {
          labels.push({x: X(r.end + 1), y: Y(D.runs[k][0].value(r.end)), text: 'stopped: OOM', colour: '#d62728', maxX: tl.L + w, prio: 3});
        }
        if (r.peak_reserved_event >= x0 && r.peak_reserved_event <= x1) {
          var px = X(r.peak_reserved_event + 0.5), py = Y(r.peak_reserved);
          g.fillStyle = colour; g.beginPath(); g.arc(px, py, 3.5, 0, 2 * Math.PI); g.fill();
          labels.push({x: px, y: py, text: 'peak ' + fmt(r.peak_reserved), colour: colour, maxX: tl.L + w, prio: 2});
        }
      });
      g.font = '11px DejaVu Sans, sans-serif';
      placeLabels(g, labels, top + 12, bottom);
      g.restore();
      g.strokeStyle = '#404040'; g.beginPath(); g.moveTo(tl.L, bottom + 0.5); g.lineTo(tl.L + w, bottom + 0.5); g.stroke();
    }
    var bottomAll = 30 + panels * (PH + 18) - 18;
    xAxis(g, tl.L, w, bottomAll, x0, x1);
    g.fillText('trace event', tl.L + w / 2, bottomAll + 30);
    if (seg.shown !== undefined && seg.shown >= x0 && seg.shown <= x1) {
      g.strokeStyle = '#000'; g.setLineDash([2, 2]); g.beginPath(); g.moveTo(X(seg.shown + 0.5), 24); g.lineTo(X(seg.shown + 0.5), bottomAll); g.stroke(); g.setLineDash([]);
    }
    $('range').textContent = 'events ' + Math.floor(x0) + '–' + Math.ceil(x1) + ' of ' + META.n_events;
  }

  function hover(e) {
    var r = tl.cv.getBoundingClientRect(), px = e.clientX - r.left;
    if (px < tl.L || px > tl.W - tl.R) { hideTip(); return; }
    var x = xAt(tl, e), w = tl.W - tl.L - tl.R, perPx = (tl.x1 - tl.x0) / w;
    var ev = Math.floor(x);
    var h = '<b>event ' + ev + '</b>' + (perPx > 1 ? ' (one pixel: ' + Math.round(perPx) + ' events; zoom in for each)' : '') + '<table><tr><th></th><th>reserved</th><th>allocated</th><th>active</th></tr>';
    META.runs.forEach(function (run, k) {
      h += '<tr><td style="color:' + COLOURS[k % COLOURS.length] + '">' + esc(run.label) + '</td>';
      if (ev > run.end) h += '<td colspan="3">' + (run.stopped_by_oom ? 'stopped by an OOM after event ' + run.end : 'no event') + '</td>';
      else for (var s = 0; s < 3; s++) h += '<td>' + fmt(D.runs[k][s].value(ev)) + '</td>';
      h += '</tr>';
    });
    h += '</table>';
    var L = LG(), k = L.lowerBound(ev);
    for (var n = 0; k < L.n && L.cause[k] === ev && n < 4; k++, n++) {
      var kd = L.kind[k];
      if (kd === 4) h += '<hr>' + allocHtml(L, k);
      else if (kd === 5) { var a = allocOf(L, k); h += '<hr>free of ' + (a >= 0 ? allocHtml(L, a) : fmt(L.size[k])); }
      else if (kd === 6) h += '<hr><b style="color:#d62728">OOM</b>: a request of ' + fmt(L.size[k]);
      else h += '<hr>' + KIND[kd] + ' ' + fmt(L.size[k]) + ' at 0x' + L.addr[k].toString(16);
    }
    var an = L.annotationsAt(ev);
    if (an.length && h.indexOf('annotation:') < 0) h += '<br>annotation: ' + esc(an.join(' › '));
    showTip(e, h);
  }

  /* ---------------------------------------------------------- bands */
  /* The allocation views draw each item (an allocation, or a segment) as
   * a band over the events it lives, stacked per pixel column by the
   * order of their birth (lifetime) or by address.  The layout walks the
   * log once up to the window's end: per column, the live items after
   * the column's last event E[c] with the offset each sits at.  Past
   * BAND_LIMIT items born in the window the per-allocation layer gives
   * way to the categories' sums per column (exact too): zoom in. */
  var BAND_LIMIT = 20000, LIVE_LIMIT = 20000;
  var bv = {x0: 0, x1: 1, mode: 'lifetime', colour: 'category'};
  var sv = {x0: 0, x1: 1};

  /* an ordered set of live items (KEYS ascending), the lowest position
   * changed since it was last laid out in LOW */
  function Live() { this.keys = []; this.objs = []; this.low = 0; }
  Live.prototype.pos = function (key) {
    var a = 0, b = this.keys.length;
    while (a < b) { var m = (a + b) >> 1; if (this.keys[m] < key) a = m + 1; else b = m; }
    return a;
  };
  Live.prototype.add = function (key, obj) {
    var n = this.keys.length, p = !n || this.keys[n - 1] < key ? n : this.pos(key);
    if (p === n) { this.keys.push(key); this.objs.push(obj); } else { this.keys.splice(p, 0, key); this.objs.splice(p, 0, obj); }
    if (p < this.low) this.low = p;
  };
  Live.prototype.remove = function (key) {
    var p = this.pos(key);
    if (p < this.keys.length && this.keys[p] === key) {
      var o = this.objs[p];
      this.keys.splice(p, 1); this.objs.splice(p, 1);
      if (p < this.low) this.low = p;
      return o;
    }
    return null;
  };

  function colEvents(x0, x1, w) {
    var E = new Float64Array(w), n = META.n_events;
    for (var c = 0; c < w; c++) E[c] = Math.min(n - 1, Math.ceil(x0 + (x1 - x0) * (c + 1) / w) - 1);
    return E;
  }

  /* the items' layout over W columns whose last entries are E: WALK(e,
   * api) goes on through the items' births and deaths up to entry e,
   * calling api.add(key, id) and api.remove(key); the state after entry
   * PRE (the window's start) is taken first, with keys alone */
  function layout(w, E, pre, walk, sizeOf) {
    var live = new Live(), items = [], totals = new Float64Array(w), col = 0;
    live.low = Infinity;
    var api = {
      add: function (key, id) { var it = {id: id, cs: [], offs: [], end: -1, cur: -1, size: sizeOf(id)}; items.push(it); live.add(key, it); },
      remove: function (key) { var it = live.remove(key); if (it) { it.end = col; it.cur = -1; } }
    };
    /* up to the window: keys alone, items for those live at its start */
    var before = walk.prefix(pre);
    if (before === null || before.length > LIVE_LIMIT) return null;
    before.sort(function (a, b) { return a[0] - b[0]; }).forEach(function (x) { api.add(x[0], x[1]); });
    for (var c = 0; c < w; c++) {
      col = c;
      walk(E[c], api);
      if (live.objs.length > LIVE_LIMIT) return null;
      if (live.low === Infinity) { totals[c] = c ? totals[c - 1] : 0; continue; }
      /* offsets change from the lowest position that changed up */
      var p = live.low, objs = live.objs, off = p > 0 ? objs[p - 1].cur + objs[p - 1].size : 0;
      live.low = Infinity;
      for (var i = p; i < objs.length; i++) {
        var it = objs[i];
        if (it.cur !== off) { it.cs.push(c); it.offs.push(off); it.cur = off; }
        off += it.size;
      }
      totals[c] = objs.length ? objs[objs.length - 1].cur + objs[objs.length - 1].size : 0;
    }
    items.forEach(function (it) { if (it.end < 0) it.end = w; });
    return {items: items.filter(function (it) { return it.cs.length; }), totals: totals, E: E, w: w};
  }

  /* a walker over the allocations of log L, keyed by MODE */
  function allocWalker(L, mode) {
    var i = 0;
    var walk = function (e, api) {
      for (; i < L.n && L.cause[i] <= e; i++) {
        var kd = L.kind[i];
        if (kd === 4) api.add(mode === 'address' ? L.addr[i] : i, i);
        else if (kd === 5) { var a = L.freeOf[i]; if (a >= 0) api.remove(mode === 'address' ? L.addr[a] : a, a); }
      }
    };
    /* the [key, id] of the allocations live after entry PRE (null: too
     * many), and the walk goes on from there */
    walk.prefix = function (pre) {
      var out = [];
      i = L.lowerBound(pre + 1);
      var live = liveAllocs(L, pre, LIVE_LIMIT + 1);
      if (live.length > LIVE_LIMIT) return null;
      live.forEach(function (k) { out.push([mode === 'address' ? L.addr[k] : k, k]); });
      return out;
    };
    return walk;
  }
  /* the alloc records live after entry K (at most MAX of them), in log
   * order: allocated by then and freed later or never */
  function liveAllocs(L, K, max) {
    var out = [], end = L.lowerBound(K + 1), Kd = L.kind, F = L.freeAt, C = L.cause;
    for (var k = 0; k < end; k++) {
      if (Kd[k] !== 4) continue;
      var f = F[k];
      if (f < 0 || C[f] > K) { out.push(k); if (max && out.length >= max) break; }
    }
    return out;
  }
  function freeOfIndex(L) {
    if (L.freeOf) return;
    var F = L.freeOf = new Int32Array(L.n).fill(-1);
    for (var k = 0; k < L.n; k++) if (L.kind[k] === 4 && L.freeAt[k] >= 0) F[L.freeAt[k]] = k;
  }

  /* the segments of log L as items {start, end, addr, size, exp}; an
   * unmapped part of a mapping ends it and the rest goes on as new items */
  function segItems(L) {
    if (L.segs) return L.segs;
    var out = [], open = new Map(), maps = [];
    for (var i = 0; i < L.n; i++) {
      var kd = L.kind[i], a = L.addr[i], c = L.cause[i];
      if (kd === 0) { var it = {start: c, end: Infinity, addr: a, size: L.size[i], exp: false, stream: L.streams[L.stream[i]]}; out.push(it); open.set(a, it); }
      else if (kd === 1) { var o = open.get(a); if (o) { o.end = c; open.delete(a); } }
      else if (kd === 2) { var m = {start: c, end: Infinity, addr: a, size: L.size[i], exp: true, stream: L.streams[L.stream[i]]}; out.push(m); maps.push(m); }
      else if (kd === 3) {
        var ue = a + L.size[i], keep = [];
        maps.forEach(function (m) {
          var me = m.addr + m.size;
          if (ue <= m.addr || a >= me) { keep.push(m); return; }
          m.end = c;
          [[m.addr, a - m.addr], [ue, me - ue]].forEach(function (r) {
            if (r[1] > 0) { var n = {start: c, end: Infinity, addr: r[0], size: r[1], exp: true, stream: m.stream}; out.push(n); keep.push(n); }
          });
        });
        maps = keep;
      }
    }
    out.forEach(function (s, k) { s.id = k; });
    L.segs = out;
    return out;
  }
  function segWalker(segs) {
    var evs = [];
    segs.forEach(function (s) { evs.push([s.start, 1, s]); if (s.end !== Infinity) evs.push([s.end, 0, s]); });
    evs.sort(function (a, b) { return a[0] - b[0] || a[1] - b[1]; });
    var i = 0;
    var walk = function (e, api) {
      for (; i < evs.length && evs[i][0] <= e; i++) {
        var s = evs[i][2];
        if (evs[i][1]) api.add(s.addr, s.id); else api.remove(s.addr, s.id);
      }
    };
    walk.prefix = function (pre) {
      var live = new Map();
      for (i = 0; i < evs.length && evs[i][0] <= pre; i++) {
        var s = evs[i][2];
        if (evs[i][1]) live.set(s.addr, s.id); else live.delete(s.addr);
      }
      return Array.from(live.entries());
    };
    return walk;
  }

  function bandCanvas(id, V, draw, hoverFn, click) {
    var cv = $(id);
    zoomable(cv, V, function () { return V.W - V.L - V.R; }, draw, click);
    cv.addEventListener('mousemove', function (e) { if (!V.dragging) hoverFn(e); });
    cv.addEventListener('mouseleave', hideTip);
  }

  function setupBands() {
    var box = $('bands');
    box.appendChild(el('div', {class: 'bar'}, 'stack by <select id="bmode"><option value="lifetime">lifetime (oldest at the bottom)</option><option value="address">address</option></select> ' +
      'colour by <select id="bcolour"><option value="category">category</option><option value="allocation">allocation</option></select> ' +
      'events <input id="bx0" type="number" min="0" style="width:8em">–<input id="bx1" type="number" min="1" style="width:8em"> <button id="bzoom">show</button> ' +
      '<button id="bwhole">whole trace</button> <button id="bpeak">around the allocated peak</button> <span id="bnote"></span>'));
    var legend = '<span class="legend">' + CATS.map(function (c, k) { return '<span><i style="border-color:' + CAT_COLOURS[k] + ';border-top-width:8px"></i>' + c + '</span>'; }).join('') + '</span>';
    box.appendChild(el('div', {class: 'sub'}, 'Every allocation as a band from its alloc to its free, its height the block\'s size (what allocated memory counts); ' +
      'the bands of a column sum to the allocated bytes then. Hover for its size, stack, annotation and category; click to pin; wheel to zoom, drag to pan. ' + legend));
    bv.cv = box.appendChild(el('canvas', {id: 'bandcv'}));
    box.appendChild(el('div', {id: 'pinned', class: 'pinned'}));
    $('bmode').onchange = function (e) { bv.mode = e.target.value; drawBands(); };
    $('bcolour').onchange = function (e) { bv.colour = e.target.value; drawBands(); };
    $('bzoom').onclick = function () { setBands(+$('bx0').value, +$('bx1').value); };
    $('bwhole').onclick = function () { setBands(0, META.n_events); };
    $('bpeak').onclick = function () { bandsAround(RUN0().peak_allocated_event); };
    bandCanvas('bandcv', bv, function () { drawBands(); drawTimeline(); drawSegTime(); }, bandHover, function (x, e) {
      var hit = bandHit(e);
      pinned = hit ? hit.id : -1;
      renderPinned(); drawBands();
    });
  }
  function setBands(x0, x1, quiet) {
    bv.x0 = Math.max(0, Math.min(x0, x1 - 1)); bv.x1 = Math.max(bv.x0 + 1, x1); clampView(bv);
    if (!quiet) { drawBands(); drawSegTime(); drawTimeline(); }
  }
  /* a window around entry E that holds about BAND_LIMIT / 2 allocations */
  function bandsAround(e, quiet) {
    var L = LG(), k = L.lowerBound(e), half = BAND_LIMIT / 4;
    var a = L.cause[Math.max(0, k - half)] || 0, b = L.cause[Math.min(L.n - 1, k + half)] || META.n_events;
    setBands(Math.min(a, e - 10), Math.max(b, e + 10) + 1, quiet);
  }

  function catColour(L, id) {
    if (bv.colour === 'category') return CAT_COLOURS[L.cat[id]];
    var h = (L.stack[id] || id) * 2654435761 % 360;
    return 'hsl(' + h + ',55%,' + (55 + (id % 3) * 8) + '%)';
  }

  function drawBands() {
    var cv = bv.cv, L = LG();
    var W = Math.max(600, cv.parentNode.clientWidth - 4), PH = 360, H = PH + 50;
    var g = hidpi(cv, W, H);
    bv.W = W; bv.L = 78; bv.R = 16; bv.top = 10; bv.PH = PH;
    var w = Math.max(1, Math.floor(W - bv.L - bv.R)), x0 = bv.x0, x1 = bv.x1;
    $('bx0').value = Math.floor(x0); $('bx1').value = Math.ceil(x1);
    freeOfIndex(L);
    var E = colEvents(x0, x1, w);
    var born = L.lowerBound(Math.ceil(x1)) - L.lowerBound(Math.floor(x0));
    /* the allocated bytes' most over the window: the axis, known before
     * the layout, which merges what would be under 2 pixels */
    var A = D.runs[META.logs[cur].run][1], amax = 0;
    columns(A, x0, x1, w, RUN0().end).forEach(function (cc) { if (cc && cc[2] > amax) amax = cc[2]; });
    var thin = 2 * niceMax(amax) / PH;
    var tb0 = performance.now();
    var lay = born <= BAND_LIMIT ? layout(w, E, Math.ceil(x0) - 1, allocWalker(L, bv.mode), function (id) { return L.block(id); }) : null;
    bv.lay = lay;
    var tb1 = performance.now();
    var max = 0, k, c;
    if (lay) { for (c = 0; c < w; c++) if (lay.totals[c] > max) max = lay.totals[c]; }
    else {
      /* the categories' sums per column */
      var sums = [], tot = new Float64Array(CATS.length), i = 0;
      for (c = 0; c < w; c++) {
        for (; i < L.n && L.cause[i] <= E[c]; i++) {
          if (L.kind[i] === 4) tot[L.cat[i]] += L.block(i);
          else if (L.kind[i] === 5 && L.freeOf[i] >= 0) tot[L.cat[L.freeOf[i]]] -= L.block(L.freeOf[i]);
        }
        sums.push(Float64Array.from(tot));
        var t = 0; for (k = 0; k < CATS.length; k++) t += tot[k];
        if (t > max) max = t;
      }
      bv.sums = sums;
    }
    var ymax = niceMax(max), top = bv.top, bottom = top + PH;
    bv.ymax = ymax; bv.E = E;
    yAxis(g, bv.L, w, top, PH, ymax);
    function Y(v) { return bottom - v / ymax * PH; }
    g.save(); g.beginPath(); g.rect(bv.L, top, w, PH); g.clip();
    if (lay) {
      /* items under THIN bytes (2 pixels) in one path per category */
      var paths = CATS.map(function () { return new Path2D(); });
      lay.items.forEach(function (it) {
        var thick = it.size >= thin, path = paths[L.cat[it.id]];
        if (thick) g.fillStyle = catColour(L, it.id);
        for (var r = 0; r < it.cs.length; r++) {
          var c0 = it.cs[r], c1 = r + 1 < it.cs.length ? it.cs[r + 1] : it.end;
          if (c1 <= c0) continue;
          var y1 = Y(it.offs[r] + it.size), y0 = Y(it.offs[r]);
          if (!thick && bv.colour === 'category') { path.rect(bv.L + c0, y1, c1 - c0, Math.max(0.5, y0 - y1)); continue; }
          g.fillRect(bv.L + c0, y1, c1 - c0, Math.max(0.5, y0 - y1));
          if (y0 - y1 >= 4) { g.fillStyle = 'rgba(255,255,255,.55)'; g.fillRect(bv.L + c0, y1, c1 - c0, 0.6); g.fillStyle = catColour(L, it.id); }
        }
      });
      paths.forEach(function (path, k) { g.fillStyle = CAT_COLOURS[k]; g.fill(path); });
      var pin = pinned >= 0 && lay.items.find(function (it) { return it.id === pinned; });
      if (pin) {
        g.strokeStyle = '#000'; g.lineWidth = 1.5;
        for (var r = 0; r < pin.cs.length; r++) {
          var c0 = pin.cs[r], c1 = r + 1 < pin.cs.length ? pin.cs[r + 1] : pin.end;
          g.strokeRect(bv.L + c0, Y(pin.offs[r] + pin.size), c1 - c0, Y(pin.offs[r]) - Y(pin.offs[r] + pin.size));
        }
      }
      $('bnote').textContent = lay.items.length + ' allocations in the window';
      fig('bands-ms', Math.round(tb1 - tb0) + ' ' + Math.round(performance.now() - tb1) + ' items ' + lay.items.length);
    } else {
      for (k = 0; k < CATS.length; k++) {
        g.fillStyle = CAT_COLOURS[k];
        for (c = 0; c < w; c++) {
          var below = 0; for (var q = 0; q < k; q++) below += bv.sums[c][q];
          var v = bv.sums[c][k];
          if (v > 0) g.fillRect(bv.L + c, Y(below + v), 1, Y(below) - Y(below + v));
        }
      }
      $('bnote').textContent = born + ' allocations in the window: their categories\' sums; zoom in (under ' + BAND_LIMIT + ') for each';
    }
    g.restore();
    g.strokeStyle = '#404040'; g.beginPath(); g.moveTo(bv.L, bottom + 0.5); g.lineTo(bv.L + w, bottom + 0.5); g.stroke();
    xAxis(g, bv.L, w, bottom, x0, x1);
    g.fillText('trace event', bv.L + w / 2, bottom + 30);
  }
  function bandHit(e) {
    var r = bv.cv.getBoundingClientRect(), px = e.clientX - r.left - bv.L, py = e.clientY - r.top;
    var c = Math.floor(px), v = (bv.top + bv.PH - py) / bv.PH * bv.ymax;
    if (!bv.lay || c < 0 || c >= bv.lay.w) return null;
    var hit = null;
    bv.lay.items.some(function (it) {
      if (c < it.cs[0] || c >= it.end) return false;
      var k = 0; while (k + 1 < it.cs.length && it.cs[k + 1] <= c) k++;
      if (it.offs[k] <= v && v < it.offs[k] + it.size) { hit = it; return true; }
      return false;
    });
    return hit;
  }
  function bandHover(e) {
    var r = bv.cv.getBoundingClientRect(), c = Math.floor(e.clientX - r.left - bv.L);
    if (c < 0 || !bv.E || c >= bv.E.length) { hideTip(); return; }
    var L = LG();
    if (!bv.lay) {
      var s = bv.sums[c], t = 0, h = '<b>after event ' + bv.E[c] + '</b><table>';
      for (var k = 0; k < CATS.length; k++) { t += s[k]; h += '<tr><td style="color:' + CAT_COLOURS[k] + '">' + CATS[k] + '</td><td>' + fmt(s[k]) + '</td></tr>'; }
      showTip(e, h + '<tr><th>allocated</th><th>' + fmt(t) + '</th></tr></table>');
      return;
    }
    var hit = bandHit(e);
    if (!hit) { hideTip(); return; }
    showTip(e, '<b>after event ' + bv.E[c] + '</b>: ' + fmt(bv.lay.totals[c]) + ' allocated<hr>' + allocHtml(L, hit.id));
  }
  function renderPinned() {
    var box = $('pinned'), L = LG();
    if (pinned < 0) { box.innerHTML = ''; return; }
    box.innerHTML = '<b>pinned</b> <button id="unpin">unpin</button> <button id="pinseg">segment map at its alloc</button><br>' + allocHtml(L, pinned);
    $('unpin').onclick = function () { pinned = -1; renderPinned(); drawBands(); };
    $('pinseg').onclick = function () { showSegments(L.cause[pinned]); };
  }

  /* ------------------------------------------------ segments over time */
  function setupSegTime() {
    var box = $('segtime');
    box.appendChild(el('div', {class: 'sub'}, 'Each segment (a cudaMalloc, or a mapped range of an expandable segment) as a band over its lifetime, stacked by address; ' +
      'the darker part is its live blocks after the column\'s last event. The window follows the allocations\' view. Hover for the segment.'));
    box.appendChild(el('canvas', {id: 'segtimecv'}));
    bandCanvas('segtimecv', bv, function () { drawBands(); drawSegTime(); drawTimeline(); }, segTimeHover, function (x) { showSegments(Math.round(x)); });
  }
  function drawSegTime() {
    var cv = $('segtimecv'), L = LG();
    var W = Math.max(600, cv.parentNode.clientWidth - 4), PH = 260, H = PH + 50;
    var g = hidpi(cv, W, H);
    var Lm = 78, w = Math.max(1, Math.floor(W - Lm - 16)), x0 = bv.x0, x1 = bv.x1, top = 10, bottom = top + PH;
    sv.W = W; sv.L = Lm; sv.R = 16; sv.top = top; sv.PH = PH;
    var segs = segItems(L), E = colEvents(x0, x1, w);
    var lay = layout(w, E, Math.ceil(x0) - 1, segWalker(segs), function (id) { return segs[id].size; });
    sv.lay = lay; sv.E = E;
    if (!lay) { g.fillStyle = '#404040'; g.fillText('more than ' + LIVE_LIMIT + ' live segments: not drawn', Lm + 10, 30); return; }
    var max = 0;
    for (var c = 0; c < w; c++) if (lay.totals[c] > max) max = lay.totals[c];
    var ymax = niceMax(max); sv.ymax = ymax;
    yAxis(g, Lm, w, top, PH, ymax);
    function Y(v) { return bottom - v / ymax * PH; }
    g.save(); g.beginPath(); g.rect(Lm, top, w, PH); g.clip();
    lay.items.forEach(function (it) {
      var s = segs[it.id], hue = s.exp ? 140 : (s.size <= 2097152 ? 30 : 210);
      for (var r = 0; r < it.cs.length; r++) {
        var c0 = it.cs[r], c1 = r + 1 < it.cs.length ? it.cs[r + 1] : it.end;
        var y1 = Y(it.offs[r] + it.size), y0 = Y(it.offs[r]);
        g.fillStyle = 'hsl(' + hue + ',45%,' + (70 + (it.id % 4) * 4) + '%)';
        g.fillRect(Lm + c0, y1, c1 - c0, Math.max(0.5, y0 - y1));
        if (y0 - y1 > 2) { g.fillStyle = 'rgba(0,0,0,.25)'; g.fillRect(Lm + c0, y1, c1 - c0, 0.6); }
      }
    });
    /* the allocated bytes over it, as a line */
    var A = D.runs[META.logs[cur].run][1], cols = columns(A, x0, x1, w, RUN0().end);
    g.strokeStyle = '#1f3f77'; g.lineWidth = 1.2; g.beginPath();
    for (c = 0; c < w && cols[c]; c++) { if (!c) g.moveTo(Lm + c, Y(cols[c][3])); else g.lineTo(Lm + c, Y(cols[c][3])); }
    g.stroke();
    g.restore();
    g.strokeStyle = '#404040'; g.beginPath(); g.moveTo(Lm, bottom + 0.5); g.lineTo(Lm + w, bottom + 0.5); g.stroke();
    xAxis(g, Lm, w, bottom, x0, x1);
    g.fillText('trace event (line: allocated bytes; bands: segments, blue large pool, orange small pool, green expandable)', Lm + w / 2, bottom + 30);
  }
  function segTimeHover(e) {
    var r = $('segtimecv').getBoundingClientRect(), c = Math.floor(e.clientX - r.left - sv.L), py = e.clientY - r.top;
    if (!sv.lay || c < 0 || c >= sv.lay.w) { hideTip(); return; }
    var v = (sv.top + sv.PH - py) / sv.PH * sv.ymax, segs = LG().segs, hit = null;
    sv.lay.items.some(function (it) {
      if (c < it.cs[0] || c >= it.end) return false;
      var k = 0; while (k + 1 < it.cs.length && it.cs[k + 1] <= c) k++;
      if (it.offs[k] <= v && v < it.offs[k] + it.size) { hit = segs[it.id]; return true; }
      return false;
    });
    if (!hit) { hideTip(); return; }
    showTip(e, '<b>after event ' + sv.E[c] + '</b>: ' + fmt(sv.lay.totals[c]) + ' reserved<hr>' + (hit.exp ? 'expandable mapping' : 'segment') + ' 0x' + hit.addr.toString(16) + ', ' + fmt(hit.size) +
      ', stream ' + hit.stream + '<br>from event ' + hit.start + (hit.end === Infinity ? ' to the end' : ' to event ' + hit.end));
  }

  /* ------------------------------------------------------ segment map */
  /* The state after entry K: the model's segments (mapped runs of an
   * expandable segment merged) and live blocks, by address. */
  function stateAt(L, K) {
    var segs = new Map(), mapped = [], Kd = L.kind;
    for (var i = 0, end = L.lowerBound(K + 1); i < end; i++) {
      if (Kd[i] > 3) continue;
      var a = L.addr[i];
      switch (Kd[i]) {
        case 0: segs.set(a, {addr: a, size: L.size[i], stream: L.streams[L.stream[i]], exp: false}); break;
        case 1: segs.delete(a); break;
        case 2: mapped.push({addr: a, size: L.size[i], stream: L.streams[L.stream[i]], exp: true}); break;
        case 3: mapped = unmap(mapped, a, L.size[i]); break;
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
    var bl = liveAllocs(L, K, 0).sort(function (x, y) { return L.addr[x] - L.addr[y]; });
    var j = 0;
    all.forEach(function (s) {
      s.blocks = [];
      while (j < bl.length && L.addr[bl[j]] < s.addr) j++;
      while (j < bl.length && L.addr[bl[j]] < s.addr + s.size) s.blocks.push(bl[j++]);
      /* what allocated memory counts: the blocks, rounding included */
      s.live = s.blocks.reduce(function (t, b) { return t + L.block(b); }, 0);
    });
    return {segs: all, blocks: bl};
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

  var MAXROWS = 600, seg = {};
  function setupSegments() {
    var box = $('segments');
    var bar = el('div', {class: 'bar'});
    bar.innerHTML = 'after event <input id="segat" type="number" min="0" style="width:9em"> <button id="seggo">show</button> ' +
      '<button id="segpeak">at the reserved peak</button> <button id="segapeak">at the allocated peak</button> ' +
      '<select id="segoom"></select> <span id="segsum"></span>';
    box.appendChild(bar);
    box.appendChild(el('div', {class: 'sub'}, 'Segments in address order (a row each; an expandable segment\'s mapped runs merged, its pages marked), each bar spanning the full width: ' +
      '<span style="color:#4c72b0">■</span> live blocks (their block sizes, rounding included), <span style="color:#ff9d9a">■</span> free beside live blocks, <span style="color:#c9c9c9">■</span> free segment. ' +
      '"free" is reserved but unallocated memory, as PyTorch\'s OOM message and <code>ccasim explain</code> count it. Hover a block for its allocation. Rows after the first ' + MAXROWS + ' are left out.'));
    var scroll = el('div', {id: 'segscroll'});
    var cv = el('canvas', {id: 'segmap'});
    scroll.appendChild(cv); box.appendChild(scroll);
    seg.cv = cv;
    $('seggo').onclick = function () { showSegments(+$('segat').value); };
    $('segpeak').onclick = function () { showSegments(RUN0().peak_reserved_event); };
    $('segapeak').onclick = function () { showSegments(RUN0().peak_allocated_event); };
    $('segoom').onchange = function (e) { if (e.target.value !== '') showSegments(+e.target.value); };
    cv.addEventListener('mousemove', segHover);
    cv.addEventListener('mouseleave', hideTip);
  }
  function oomOptions(sel, what) {
    var r = RUN0();
    sel.innerHTML = '<option value="">' + (r.ooms.length ? 'at an OOM…' : 'no OOM') + '</option>' +
      r.ooms.slice(0, 200).map(function (e, i) { return '<option value="' + e + '">' + what + ' OOM ' + (i + 1) + ' (event ' + e + ')</option>'; }).join('');
    sel.disabled = !r.ooms.length;
  }
  function showSegments(K, quiet) {
    K = Math.max(0, Math.min(K, META.n_events - 1));
    $('segat').value = K;
    seg.shown = K;
    var L = LG(), st = stateAt(L, K);
    seg.state = st.segs;
    var cv = seg.cv;
    var rows = seg.state.slice(0, MAXROWS), RH = rows.length > 120 ? 10 : 16;
    var W = Math.max(600, cv.parentNode.clientWidth - 20), H = Math.max(20, rows.length * RH + 4);
    var g = hidpi(cv, W, H);
    var LW = 230, bx0 = LW, bx1 = W - 120;
    seg.geom = {RH: RH, bx0: bx0, bx1: bx1};
    var reserved = 0, live = 0, stranded = 0;
    seg.state.forEach(function (s) { reserved += s.size; live += s.live; if (s.live) stranded += s.size - s.live; });
    g.font = (RH > 12 ? 11 : 9) + 'px DejaVu Sans Mono, monospace';
    rows.forEach(function (s, i) {
      var y = i * RH + 2, h = RH - 3, scale = (bx1 - bx0) / s.size;
      if (i % 2 === 0) { g.fillStyle = '#f6f6f6'; g.fillRect(0, i * RH, W, RH); }
      g.fillStyle = s.live ? '#ff9d9a' : '#c9c9c9'; g.fillRect(bx0, y, bx1 - bx0, h);
      g.fillStyle = '#4c72b0';
      s.blocks.forEach(function (b) { g.fillRect(bx0 + (L.addr[b] - s.addr) * scale, y, Math.max(1, L.block(b) * scale), h); });
      g.fillStyle = '#ffffff';
      s.blocks.forEach(function (b) { if (L.block(b) * scale >= 4) g.fillRect(bx0 + (L.addr[b] - s.addr) * scale, y, 0.75, h); });
      if (s.exp && L.page && L.page * scale >= 3) {
        g.fillStyle = '#202020';
        for (var pa = Math.ceil(s.addr / L.page) * L.page; pa < s.addr + s.size; pa += L.page) g.fillRect(bx0 + (pa - s.addr) * scale, y + h - 3, 1, 3);
      }
      g.fillStyle = '#202020'; g.textAlign = 'left';
      g.fillText('0x' + s.addr.toString(16) + ' ' + fmt(s.size) + (s.exp ? ' exp' : ''), 4, y + h - 1);
      g.textAlign = 'right'; g.fillText(fmt(s.size - s.live) + ' free', W - 4, y + h - 1);
    });
    var free = reserved - live;
    $('segsum').textContent = 'after event ' + K + ': ' + seg.state.length + ' segments, ' + fmt(reserved) +
      ' reserved, ' + fmt(live) + ' allocated in ' + st.blocks.length + ' blocks, ' + fmt(free) + ' free (reserved but unallocated), of which ' +
      fmt(stranded) + ' beside live blocks' + (L.page ? '; expandable pages of ' + fmt(L.page) : '');
    fig('segments-at', K);
    fig('segments', seg.state.length);
    fig('segments-reserved', reserved);
    fig('segments-allocated', live);
    fig('segments-free', free);
    fig('segments-free-text', fmt(free));
    if (!quiet) drawTimeline();
  }
  function segHover(e) {
    if (!seg.state) return;
    var r = seg.cv.getBoundingClientRect(), x = e.clientX - r.left, y = e.clientY - r.top;
    var G = seg.geom, row = Math.floor(y / G.RH), s = seg.state[row];
    if (!s || x < G.bx0 || x > G.bx1) { hideTip(); return; }
    var addr = s.addr + (x - G.bx0) / (G.bx1 - G.bx0) * s.size, L = LG(), hit = -1;
    s.blocks.forEach(function (b) { if (L.addr[b] <= addr && addr < L.addr[b] + L.block(b)) hit = b; });
    var h = '0x' + s.addr.toString(16) + ': ' + fmt(s.size) + (s.exp ? ' expandable' : '') + ' segment, stream ' + s.stream + ', ' +
      s.blocks.length + ' live block(s), ' + fmt(s.size - s.live) + ' free';
    if (hit >= 0) h += '<hr>' + allocHtml(L, hit);
    showTip(e, h);
  }

  /* ------------------------------------------------------ flame graph */
  var fl = {};
  function setupFlame() {
    var box = $('flame');
    box.appendChild(el('div', {class: 'bar'}, '<button id="flres">at the reserved peak</button> <button id="flall">at the allocated peak</button> ' +
      '<select id="floom"></select> <button id="flseg">at the segment map\'s event</button> <button id="flup">whole graph</button> <span id="flsum"></span>'));
    box.appendChild(el('div', {class: 'sub'}, 'The live blocks at one moment by the Python stack that allocated them, outermost frame at the top: a box\'s width is its bytes. ' +
      'Colour: the category most of its bytes are in. Click a box to zoom into it.'));
    box.appendChild(el('canvas', {id: 'flamecv'}));
    $('flres').onclick = function () { showFlame(RUN0().peak_reserved_event, 'the reserved peak'); };
    $('flall').onclick = function () { showFlame(RUN0().peak_allocated_event, 'the allocated peak'); };
    $('floom').onchange = function (e) { if (e.target.value !== '') showFlame(+e.target.value, 'the OOM at event ' + e.target.value); };
    $('flseg').onclick = function () { showFlame(seg.shown, 'event ' + seg.shown); };
    $('flup').onclick = function () { fl.root = fl.tree; drawFlame(); };
    var cv = $('flamecv');
    cv.addEventListener('mousemove', flameHover);
    cv.addEventListener('mouseleave', hideTip);
    cv.addEventListener('click', function (e) { var n = flameHit(e); if (n) { fl.root = n; drawFlame(); } });
  }
  function showFlame(K, what) {
    K = Math.max(0, Math.min(K, META.n_events - 1));
    var L = LG(), st = stateAt(L, K);
    var tree = {name: 'all live blocks', bytes: 0, n: 0, cats: new Float64Array(CATS.length), kids: new Map(), depth: 0};
    var byStack = new Map();
    st.blocks.forEach(function (b) {
      var s = L.stack[b], e = byStack.get(s);
      if (!e) { e = {bytes: 0, n: 0, cats: new Float64Array(CATS.length)}; byStack.set(s, e); }
      var sz = L.block(b); e.bytes += sz; e.n++; e.cats[L.cat[b]] += sz;
    });
    byStack.forEach(function (e, s) {
      var frames = s ? L.meta.stacks[s - 1].slice().reverse().map(function (f) { return L.meta.frames[f]; }) : ['(no Python stack: C++, e.g. the autograd engine)'];
      var node = tree;
      add(node, e);
      frames.slice(0, 80).forEach(function (f, d) {
        var k = node.kids.get(f);
        if (!k) { k = {name: f, bytes: 0, n: 0, cats: new Float64Array(CATS.length), kids: new Map(), depth: d + 1, parent: node}; node.kids.set(f, k); }
        add(k, e); node = k;
      });
    });
    function add(n, e) { n.bytes += e.bytes; n.n += e.n; for (var c = 0; c < CATS.length; c++) n.cats[c] += e.cats[c]; }
    fl.tree = fl.root = tree; fl.at = K; fl.what = what;
    $('flsum').textContent = 'after event ' + K + (/^event /.test(what) ? '' : ' (' + what + ')') + ': ' + fmt(tree.bytes) + ' in ' + tree.n + ' live blocks';
    fig('flame-at', K);
    fig('flame-total', tree.bytes);
    drawFlame();
  }
  function drawFlame() {
    var cv = $('flamecv'), root = fl.root, RH = 17, boxes = [];
    var maxDepth = 0;
    (function depth(n) { if (n.depth > maxDepth) maxDepth = n.depth; n.kids.forEach(depth); })(root);
    var W = Math.max(600, cv.parentNode.clientWidth - 4), H = Math.min(2000, (maxDepth - root.depth + 1) * RH + 4);
    var g = hidpi(cv, W, H);
    g.font = '11px DejaVu Sans, sans-serif';
    function lay(n, x, w, row) {
      if (w < 0.3 || row * RH > H) return;
      var best = 0; for (var c = 1; c < CATS.length; c++) if (n.cats[c] > n.cats[best]) best = c;
      g.fillStyle = CAT_COLOURS[best]; g.globalAlpha = 0.35 + 0.65 * n.cats[best] / Math.max(1, n.bytes);
      g.fillRect(x, row * RH + 1, Math.max(0.5, w - 1), RH - 2); g.globalAlpha = 1;
      boxes.push({x: x, w: w, row: row, n: n});
      if (w > 30) {
        g.save(); g.beginPath(); g.rect(x, row * RH, w - 2, RH); g.clip();
        /* a frame's file without its directories: the box is narrow */
        var short = n.name.replace(/\(([^()]*\/)?([^/()]*)\)$/, '($2)');
        g.fillStyle = '#101010'; g.textAlign = 'left'; g.fillText(short + ' ' + fmt(n.bytes), x + 3, row * RH + 12); g.restore();
      }
      var kx = x, kids = Array.from(n.kids.values()).sort(function (a, b) { return b.bytes - a.bytes; });
      kids.forEach(function (k) { var kw = n.bytes ? w * k.bytes / n.bytes : 0; lay(k, kx, kw, row + 1); kx += kw; });
    }
    lay(root, 0, W, 0);
    fl.boxes = boxes;
  }
  function flameHit(e) {
    var r = $('flamecv').getBoundingClientRect(), x = e.clientX - r.left, row = Math.floor((e.clientY - r.top) / 17);
    var hit = null;
    (fl.boxes || []).some(function (b) { if (b.row === row && b.x <= x && x < b.x + b.w) { hit = b.n; return true; } return false; });
    return hit;
  }
  function flameHover(e) {
    var n = flameHit(e);
    if (!n) { hideTip(); return; }
    var h = '<b>' + esc(n.name) + '</b><br>' + fmt(n.bytes) + ' in ' + n.n + ' blocks, ' + pct(n.bytes, fl.tree.bytes) + ' of the live bytes after event ' + fl.at + '<table>';
    for (var c = 0; c < CATS.length; c++) if (n.cats[c]) h += '<tr><td style="color:' + CAT_COLOURS[c] + '">' + CATS[c] + '</td><td>' + fmt(n.cats[c]) + '</td></tr>';
    showTip(e, h + '</table>');
  }

  /* ----------------------------------------------------------- search */
  /* a size query: [<|<=|>|>=|=] NUMBER [unit]; a bare size finds blocks
   * of at least that many bytes */
  function sizeQuery(q) {
    var m = /^\s*(<=|>=|<|>|=)?\s*([\d.]+)\s*(b|k|kb|kib|m|mb|mib|g|gb|gib|t|tb|tib)?\s*$/i.exec(q);
    if (!m) return null;
    var mul = {b: 1, k: 1024, kb: 1e3, kib: 1024, m: 1048576, mb: 1e6, mib: 1048576, g: 1073741824, gb: 1e9, gib: 1073741824, t: 1099511627776, tb: 1e12, tib: 1099511627776}[(m[3] || 'b').toLowerCase()];
    var v = parseFloat(m[2]) * mul, op = m[1] || '>=';
    return function (s) { return op === '<' ? s < v : op === '<=' ? s <= v : op === '>' ? s > v : op === '=' ? s === v : s >= v; };
  }
  function setupSearch() {
    var box = $('search');
    box.appendChild(el('div', {class: 'bar'}, '<input id="q" type="search" placeholder="size (>100MiB, =2097152), or text in a stack frame, annotation or user metadata" style="width:42em"> ' +
      '<button id="qgo">search</button> <span id="qsum"></span>'));
    box.appendChild(el('div', {id: 'qres'}));
    $('qgo').onclick = runSearch;
    $('q').addEventListener('keydown', function (e) { if (e.key === 'Enter') runSearch(); });
  }
  function runSearch() {
    var L = LG(), q = $('q').value.trim(), out = [], total = 0, bytes = 0;
    if (!q) return;
    var bySize = sizeQuery(q), needle = q.toLowerCase();
    var stackHit = new Uint8Array(L.meta.stacks.length + 1), mdHit = new Uint8Array(L.meta.metadata.length + 1);
    var ranges = [];
    if (!bySize) {
      L.meta.stacks.forEach(function (st, s) { stackHit[s + 1] = st.some(function (f) { return L.meta.frames[f].toLowerCase().indexOf(needle) >= 0; }) ? 1 : 0; });
      L.meta.metadata.forEach(function (m, i) { mdHit[i + 1] = m.toLowerCase().indexOf(needle) >= 0 ? 1 : 0; });
      ranges = L.meta.annotations.filter(function (a) { return a.name.toLowerCase().indexOf(needle) >= 0; });
    }
    for (var k = 0; k < L.n; k++) {
      if (L.kind[k] !== 4) continue;
      var ok = bySize ? bySize(L.size[k]) : stackHit[L.stack[k]] || mdHit[L.md[k]] ||
        ranges.some(function (a) { return a.start <= L.cause[k] && L.cause[k] <= a.end; });
      if (!ok) continue;
      total++; bytes += L.block(k);
      if (out.length < 200) out.push(k);
    }
    $('qsum').textContent = total + ' allocation' + (total === 1 ? '' : 's') + ', ' + fmt(bytes) + ' in their blocks' + (total > 200 ? ' (the first 200 listed)' : '');
    fig('search-hits', total);
    var t = '<table class="data"><tr><th>allocated at</th><th>freed at</th><th>size</th><th>block</th><th>category</th><th>innermost frame</th></tr>';
    out.forEach(function (k) {
      var f = L.freeAt[k], fr = L.stack[k] ? L.meta.frames[L.meta.stacks[L.stack[k] - 1][0]] : '';
      t += '<tr data-k="' + k + '" class="hit"><td>' + L.cause[k] + '</td><td>' + (f >= 0 ? L.cause[f] : 'never') + '</td><td>' + fmt(L.size[k]) + '</td><td>' + fmt(L.block(k)) +
        '</td><td style="color:' + CAT_COLOURS[L.cat[k]] + '">' + CATS[L.cat[k]] + '</td><td>' + esc(fr) + '</td></tr>';
    });
    $('qres').innerHTML = t + '</table>';
    Array.prototype.forEach.call($('qres').querySelectorAll('tr.hit'), function (tr) {
      tr.onclick = function () {
        var k = +tr.getAttribute('data-k'), f = L.freeAt[k], a = L.cause[k], b = f >= 0 ? L.cause[f] : META.n_events;
        pinned = k; renderPinned();
        var pad = Math.max(20, (b - a) / 4);
        setBands(a - pad, b + pad);
        if (bv.lay === null) bandsAround(a);
        showSegments(a);
        $('bands').scrollIntoView();
      };
    });
  }

  /* ------------------------------------------------- peak attribution */
  function renderPeak() {
    var box = $('peak');
    var p = META.peak;
    if (!p) {
      box.appendChild(el('p', {class: 'none'}, 'No peak attribution in this page: write one with <code>ccasim peak TRACE --json &gt; peak.json</code> ' +
        'and pass it with <code>ccasim view TRACE --peak peak.json</code>.'));
      return;
    }
    if (p.moments && p.figures) { renderPeakWords(box, p); return; }
    box.appendChild(renderValue(p, 0));
  }
  var MOMENT = {reserved_peak: 'At the reserved peak', allocated_peak: 'At the allocated peak', oom: 'At the OOM'};
  function groupTable(title, rows, total) {
    if (!rows || !rows.length) return '';
    var t = '<h4>' + title + '</h4><table class="data"><tr><th>bytes</th><th>share</th><th>blocks</th><th>where</th></tr>';
    rows.slice(0, 12).forEach(function (r) {
      var where = r.frames && r.frames.length ? '<div class="frames">' + esc(r.frames.slice(0, 6).join('\n')) + (r.frames.length > 6 ? '\n…' : '') + '</div>' : esc(r.key);
      t += '<tr><td class="num">' + fmt(r.bytes) + '</td><td class="num">' + pct(r.bytes, total) + '</td><td class="num">' + r.blocks + '</td><td>' + where + '</td></tr>';
    });
    return t + '</table>' + (rows.length > 12 ? '<p class="none">' + (rows.length - 12) + ' more groups</p>' : '');
  }
  function segTable(list) {
    var t = '<table class="data"><tr><th>segment</th><th>size</th><th>pool</th><th>live</th><th>free</th><th>largest free block</th><th>made by</th></tr>';
    list.slice(0, 200).forEach(function (s) {
      var by = s.created_by ? 'a request of ' + fmt(s.created_by.size) + ' at event ' + s.created_by.event : '';
      t += '<tr><td>' + esc(s.address) + (s.expandable ? ' (expandable)' : '') + '</td><td class="num">' + fmt(s.size) + '</td><td>' + esc(s.pool) + ', stream ' + esc(s.stream) +
        '</td><td class="num">' + fmt(s.live) + '</td><td class="num">' + fmt(s.free) + '</td><td class="num">' + fmt(s.largest_free_block) + '</td><td>' + by + '</td></tr>';
    });
    return t + '</table>' + (list.length > 200 ? '<p class="none">' + (list.length - 200) + ' more</p>' : '');
  }
  function renderPeakWords(box, p) {
    var f = p.figures, h = '';
    var rp = f.reserved_peak, ap = f.allocated_peak;
    h += '<p>The reserved memory peaked at <b>' + fmt(rp.reserved) + '</b> after event ' + rp.event + ', with ' + fmt(rp.allocated) + ' allocated in ' + rp.segments +
      ' segments: ' + fmt(f.unallocated_at_reserved_peak) + ' (' + pct(f.unallocated_at_reserved_peak, rp.reserved) + ') reserved but unallocated. ';
    h += 'The allocated memory peaked at <b>' + fmt(ap.allocated) + '</b> after event ' + ap.event + ', with ' + fmt(ap.reserved) + ' reserved. ';
    h += 'At most ' + f.peak_segment_count + ' segments were held at once.' + (p.ooms ? ' The run met ' + p.ooms + ' OOM' + (p.ooms > 1 ? 's' : '') + '.' : '') + '</p>';
    box.innerHTML = h;
    (p.moments || []).forEach(function (m) {
      var title = (MOMENT[m.kind] || m.kind) + ' (after event ' + m.event + ')';
      var s = '<p>' + fmt(m.reserved) + ' reserved, ' + fmt(m.allocated) + ' allocated in ' + m.live_blocks + ' live blocks' +
        (m.pending_free ? ', ' + fmt(m.pending_free) + ' in ' + m.pending_free_blocks + ' blocks waiting for their stream to free them' : '') + '.';
      if (m.request) {
        var r = m.request, w = m.why || {};
        s += ' A request of <b>' + fmt(r.size) + '</b>' + (r.rounded !== r.size ? ' (rounded to ' + fmt(r.rounded) + ')' : '') + ' on stream ' + esc(r.stream) + ' in the ' + esc(r.pool) +
          ' pool needed a new segment of ' + fmt(r.segment_size) + (r.recorded ? '; the trace recorded this OOM' : '; the model ran out where the recording did not') + '. ';
        if (w.free_on_stream !== undefined) s += 'Its stream had ' + fmt(w.free_on_stream) + ' free, the largest free block ' + fmt(w.largest_free_on_stream) + '; ' +
          fmt(w.stranded) + ' free was stranded beside live blocks and ' + fmt(w.cached) + ' in whole cached segments' +
          (w.over_cap ? '; the cap (' + fmt(w.allowed_maximum) + ') refused the segment' : '') + '.';
      }
      s += '</p>';
      var g = m.groups || {};
      s += groupTable('Live bytes by the stack that allocated them', g.stack, m.allocated);
      s += groupTable('by the record_function range open then', g.annotation, m.allocated);
      s += groupTable('by user metadata', g.user_metadata, m.allocated);
      var det = el('details', m.kind === 'oom' || m.kind === 'reserved_peak' ? {open: ''} : {});
      det.appendChild(el('summary', {}, esc(title)));
      det.appendChild(el('div', {}, s));
      if (m.free_segments && m.free_segments.length) {
        var d2 = el('details');
        d2.appendChild(el('summary', {class: 'minor'}, m.free_segments.length + ' segments with free memory'));
        d2.appendChild(el('div', {}, segTable(m.free_segments)));
        det.appendChild(d2);
      }
      if (m.segments && m.segments.length) {
        var d3 = el('details');
        d3.appendChild(el('summary', {class: 'minor'}, 'all ' + m.segments.length + ' segments'));
        d3.appendChild(el('div', {}, segTable(m.segments)));
        det.appendChild(d3);
      }
      box.appendChild(det);
    });
  }
  /* any other JSON object: keys in words, byte counts in units, times left out */
  function words(k) { return esc(String(k).replace(/_/g, ' ')); }
  function isBytesKey(k) { return !/blocks$|count$|segments$|event|time/i.test(k) && /bytes|size|reserved|allocated|free|active|stranded|cached|^live$/i.test(k); }
  function scalar(k, v) {
    if (typeof v === 'number' && isBytesKey(k)) return '<span class="num" title="' + v + ' B">' + fmt(v) + '</span>';
    if (typeof v === 'number') return '<span class="num">' + v + '</span>';
    if (typeof v === 'boolean') return v ? 'yes' : 'no';
    if (v === null) return '';
    if (Array.isArray(v) && !v.length) return '';
    if (Array.isArray(v) && typeof v[0] !== 'object') return v.slice(0, 200).map(function (x) { return scalar(k, x); }).join(', ');
    if (typeof v === 'object') return Object.keys(v).filter(function (q) { return !/time_us/.test(q); }).map(function (q) { return words(q) + ': ' + (typeof v[q] === 'object' && v[q] ? esc(JSON.stringify(v[q]).slice(0, 200)) : scalar(q, v[q])); }).join('<br>');
    return esc(v);
  }
  function renderValue(v, depth) {
    var div = el('div');
    if (Array.isArray(v)) {
      if (!v.length) { div.innerHTML = '<span class="none">none</span>'; return div; }
      if (typeof v[0] !== 'object' || v[0] === null) { div.innerHTML = v.slice(0, 200).map(function (x) { return scalar('', x); }).join(', '); return div; }
      var keys = [];
      v.slice(0, 50).forEach(function (o) { Object.keys(o).forEach(function (k) { if (keys.indexOf(k) < 0 && !/time_us/.test(k)) keys.push(k); }); });
      var t = '<table class="data"><tr>' + keys.map(function (k) { return '<th>' + words(k) + '</th>'; }).join('') + '</tr>';
      v.slice(0, 200).forEach(function (o) {
        t += '<tr>' + keys.map(function (k) {
          var x = o[k];
          if (Array.isArray(x) && x.every(function (f) { return typeof f === 'string'; })) return '<td><div class="frames">' + esc(x.slice(0, 8).join('\n')) + '</div></td>';
          return '<td>' + scalar(k, x) + '</td>';
        }).join('') + '</tr>';
      });
      div.innerHTML = t + '</table>' + (v.length > 200 ? '<p class="none">' + (v.length - 200) + ' more rows left out</p>' : '');
      return div;
    }
    if (v && typeof v === 'object') {
      var simple = Object.keys(v).filter(function (k) { return (v[k] === null || typeof v[k] !== 'object') && !/time_us/.test(k); });
      if (simple.length) div.innerHTML = '<table class="data">' + simple.map(function (k) { return '<tr><th>' + words(k) + '</th><td>' + scalar(k, v[k]) + '</td></tr>'; }).join('') + '</table>';
      Object.keys(v).filter(function (k) { return v[k] !== null && typeof v[k] === 'object'; }).forEach(function (k) {
        var det = el('details', depth < 1 ? {open: ''} : {});
        det.appendChild(el('summary', {}, words(k) + (Array.isArray(v[k]) ? ' (' + v[k].length + ')' : '')));
        det.appendChild(depth < 6 ? renderValue(v[k], depth + 1) : el('pre', {}, esc(JSON.stringify(v[k]).slice(0, 2000))));
        div.appendChild(det);
      });
      return div;
    }
    div.innerHTML = scalar('', v);
    return div;
  }

  /* ------------------------------------------------------------ rank */
  function rankChanged() {
    oomOptions($('segoom'), ''); oomOptions($('floom'), '');
    var r = RUN0();
    bv.x0 = 0; bv.x1 = Math.max(1, META.n_events);
    var L = LG();
    if (L.lowerBound(META.n_events) > BAND_LIMIT) bandsAround(r.peak_allocated_event, true);
    var t = [performance.now()];
    renderPinned(); drawBands(); t.push(performance.now());
    drawSegTime(); t.push(performance.now());
    showSegments(r.peak_reserved_event, true); t.push(performance.now());
    showFlame(r.peak_reserved_event, 'the reserved peak'); t.push(performance.now());
    fig('draw-ms', t.slice(1).map(function (x, i) { return Math.round(x - t[i]); }).join(' '));
  }

  /* --------------------------------------------------------------- main */
  function section(title, id, tag) { app.appendChild(el('h2', {}, title)); app.appendChild(el(tag || 'div', {id: id})); }
  function start(bytes) {
    var t0 = performance.now();
    D = parse(bytes);
    var t1 = performance.now();
    app.innerHTML = '';
    var nrec = D.logs.reduce(function (t, L) { return t + L.n; }, 0);
    app.appendChild(el('div', {class: 'sub'}, (RANKS ? META.logs.length + ' snapshots' : esc(META.trace) + ', device ' + META.device) + ': ' + META.n_events + ' events, ' +
      META.runs.length + ' run' + (META.runs.length > 1 ? 's' : '') + '; ' + nrec + ' model events'));
    if (META.host) {
      /* pinned host memory (PyTorch 2.14+ snapshots): read, not simulated */
      app.appendChild(el('div', {class: 'sub', id: 'host'}, 'pinned host memory: ' + META.host.segments + ' host segments (' +
        fmt(META.host.bytes) + '), ' + META.host.traces + ' host trace entries: shown, not simulated (ccasim models device memory)'));
    }
    app.appendChild(el('div', {id: 'figures', hidden: ''}));
    if (RANKS) { section('Ranks', 'ranks'); }
    section('Memory over the trace', 'timeline');
    var rankBar = el('div', {class: 'bar sticky'}, (RANKS ? 'rank shown below: <select id="rank"></select>' : ''));
    app.appendChild(rankBar);
    section('Allocations over time', 'bands');
    section('Segments over time', 'segtime');
    section('Segment map', 'segments');
    section('Live memory by stack (flame graph)', 'flame');
    section('Search the allocations', 'search');
    section('Peak attribution', 'peak', 'section');
    tip = el('div', {id: 'tip'});
    document.body.appendChild(tip);
    /* the figures the page computed, for tests and readers */
    D.runs.forEach(function (ss, k) {
      var R = ss[0], peak = 0, at = 0;
      for (var i = 0; i < R.n; i++) if (R.val[i] > peak) { peak = R.val[i]; at = R.idx[i]; }
      fig('peak-reserved-' + k, peak);
      fig('peak-reserved-event-' + k, at);
      var A = ss[1], pa = 0, pat = 0;
      for (var j = 0; j < A.n; j++) if (A.val[j] > pa) { pa = A.val[j]; pat = A.idx[j]; }
      fig('peak-allocated-' + k, pa);
      fig('peak-allocated-event-' + k, pat);
    });
    if (RANKS) renderRanks();
    bv.x1 = Math.max(1, META.n_events);
    setupTimeline();
    setupBands();
    setupSegTime();
    setupSegments();
    setupFlame();
    setupSearch();
    renderPeak();
    rankChanged();
    var tt = performance.now();
    drawTimeline();
    fig('timeline-ms', Math.round(performance.now() - tt));
    var t2 = performance.now();
    app.setAttribute('data-status', 'ready');
    console.log('ccasim view: ready ' + Math.round(t2) + ' ms after navigation: data ' + Math.round(t0 - T0) +
      ' ms, decode ' + Math.round(t1 - t0) + ' ms, draw ' + Math.round(t2 - t1) + ' ms');
    fig('ready-ms', Math.round(t2));
    fig('split-ms', [t0 - T0, t1 - t0, t2 - t1].map(Math.round).join(' '));
  }

  /* for tests and the curious: drive the page from the console */
  window.ccasimView = {
    /* the allocation views over events [x0, x1) */
    zoom: function (x0, x1) { setBands(x0, x1); return [bv.x0, bv.x1]; },
    /* the bands' sum after entry E, where a column of the allocation
     * view ends there (else null) */
    bandsSumAt: function (e) {
      if (!bv.lay) return null;
      for (var c = 0; c < bv.lay.w; c++) if (bv.E[c] === e) return bv.lay.totals[c];
      return null;
    },
    segments: function (e) { showSegments(e); return seg.state.length; },
    flame: function (e) { showFlame(e, 'event ' + e); return fl.tree.bytes; },
    rank: function (k) { cur = k; rankChanged(); },
    search: function (q) { $('q').value = q; runSearch(); },
    pin: function (k) { pinned = k; renderPinned(); drawBands(); },
    hoverBand: function (id) {
      /* a mouse event over band ID's middle, for screenshots */
      var it = bv.lay && bv.lay.items.find(function (x) { return x.id === id; });
      if (!it) return false;
      var c = Math.floor((it.cs[0] + it.end) / 2), k = 0; while (k + 1 < it.cs.length && it.cs[k + 1] <= c) k++;
      var r = bv.cv.getBoundingClientRect(), v = it.offs[k] + it.size / 2;
      var ev = {clientX: r.left + bv.L + c + 0.5, clientY: r.top + bv.top + bv.PH - v / bv.ymax * bv.PH, pageX: 0, pageY: 0};
      ev.pageX = ev.clientX + window.scrollX; ev.pageY = ev.clientY + window.scrollY;
      bandHover(ev);
      return true;
    },
    log: function () { return LG(); }
  };

  /* the browser decodes: base64 through Uint8Array.fromBase64 (or a
   * data: URL through fetch, where it has none), then gzip through
   * DecompressionStream */
  var T0 = performance.now();
  var text = $('data').textContent;
  (Uint8Array.fromBase64 ? Promise.resolve(new Blob([Uint8Array.fromBase64(text)]))
    : fetch('data:application/octet-stream;base64,' + text).then(function (r) { return r.blob(); }))
    .then(function (blob) { text = null; return new Response(blob.stream().pipeThrough(new DecompressionStream('gzip'))).arrayBuffer(); })
    .then(function (buf) { start(new Uint8Array(buf)); })
    .catch(function (e) { report('error: ' + (e && e.stack || e)); app.setAttribute('data-status', 'failed'); });
})();
