// The style and script of `lumos report`'s page (report/html_report.hpp). The script reads the
// page's JSON script elements and draws each: a sweep's Pareto front (hover shows the
// configuration, GPU types filter it), its TP x PP heat map and carbon account; an estimate's
// breakdown and per-stage bars; a replay's steps, breakdown and per-rank bars; a carbon account.
// It reads a sweep's columns by name, taking the first of several spellings that is present, so
// a renamed column loses its chart, not the page. It sets a marker in the page when it is done
// (#lumos-rendered) and another for any script error (#lumos-script-error): how the tests see
// that it ran.
#include "report/html_report.hpp"

namespace lumos::report {

const char* const kHtmlReportStyle = R"CSS(
body { font: 14px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0 auto;
       max-width: 1100px; padding: 0 16px 40px; color: #222; }
header h1 { font-size: 22px; margin: 18px 0 2px; }
.inputs { color: #666; margin: 0 0 12px; }
section { border-top: 1px solid #ddd; padding-top: 8px; margin-top: 16px; }
h2 { font-size: 18px; margin: 6px 0; } h3 { font-size: 15px; margin: 12px 0 4px; }
.note { color: #555; font-size: 13px; }
table { border-collapse: collapse; margin: 6px 0; }
td, th { border: 1px solid #ddd; padding: 3px 8px; text-align: right; }
th { background: #f4f4f4; } td.text, th.text { text-align: left; }
.filters label { margin-right: 12px; } .swatch { display: inline-block; width: 10px;
  height: 10px; margin-right: 3px; border-radius: 2px; }
svg text { font: 11px system-ui, sans-serif; fill: #333; }
.tip { position: fixed; pointer-events: none; background: #fff; border: 1px solid #999;
       padding: 4px 6px; font-size: 12px; display: none; box-shadow: 0 1px 4px #0003; }
td.infeasible { background: repeating-linear-gradient(45deg, #eee, #eee 4px, #ddd 4px, #ddd 8px);
                color: #666; } td.absent { color: #aaa; }
.marker { display: none; }
)CSS";

const char* const kHtmlReportScript = R"JS(
(function () {
  'use strict';
  window.addEventListener('error', function (e) { marker('lumos-script-error', String(e.message)); });
  var SVGNS = 'http://www.w3.org/2000/svg';
  var PALETTE = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2',
                 '#7f7f7f', '#bcbd22', '#17becf'];
  var PARTS = [['exposed_compute_us', 'compute (not overlapped)', '#1f77b4'],
               ['overlapped_us', 'compute overlapping communication', '#aec7e8'],
               ['exposed_comm_us', 'communication (exposed)', '#d62728'],
               ['bubble_us', 'pipeline bubble', '#ff7f0e'],
               ['other_us', 'other (idle, host, memory)', '#7f7f7f']];
  var main = document.getElementById('lumos-report');
  var tip = el('div', {'class': 'tip'}, document.body);

  function marker(id, text) {
    var d = document.createElement('div');
    d.id = id; d.className = 'marker'; d.textContent = text;
    document.body.appendChild(d);
  }
  function el(tag, attrs, parent, text) {
    var e = document.createElement(tag);
    for (var k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    if (parent) parent.appendChild(e);
    return e;
  }
  function sv(tag, attrs, parent, text) {
    var e = document.createElementNS(SVGNS, tag);
    for (var k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    if (parent) parent.appendChild(e);
    return e;
  }
  // Engineering notation: 3 significant digits and a k, M, G or T prefix.
  function fmt(x) {
    if (typeof x !== 'number' || !isFinite(x)) return String(x);
    if (Number.isInteger(x) && Math.abs(x) < 1000) return String(x);
    var a = Math.abs(x), units = ['', ' k', ' M', ' G', ' T'], i = 0;
    while (a >= 1000 && i < units.length - 1) { a /= 1000; x /= 1000; i++; }
    return (a >= 100 ? x.toFixed(0) : a >= 10 ? x.toFixed(1) : a === 0 ? '0' : a >= 0.01 ?
            x.toFixed(2) : x.toExponential(2)) + units[i];
  }
  function pick(row, names) {
    for (var i = 0; i < names.length; i++) if (row && names[i] in row) return names[i];
    return null;
  }
  function section(title, note) {
    var s = el('section', {}, main);
    el('h2', {}, s, title);
    if (note) el('p', {'class': 'note'}, s, note);
    return s;
  }
  function table(parent, header, rows) {
    var t = el('table', {}, parent), tr = el('tr', {}, t);
    header.forEach(function (h, i) { el('th', {'class': i ? '' : 'text'}, tr, h); });
    rows.forEach(function (r) {
      var row = el('tr', {}, t);
      r.forEach(function (c, i) {
        el('td', {'class': i ? '' : 'text'}, row, typeof c === 'number' ? fmt(c) : String(c));
      });
    });
    return t;
  }
  function showTip(evt, text) {
    tip.textContent = text; tip.style.display = 'block';
    tip.style.left = (evt.clientX + 12) + 'px'; tip.style.top = (evt.clientY + 12) + 'px';
  }
  function hideTip() { tip.style.display = 'none'; }
  function ticks(lo, hi, n) {
    var raw = (hi - lo) / n || 1, p = Math.pow(10, Math.floor(Math.log10(raw))), f = raw / p;
    var step = (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * p, out = [];
    for (var i = Math.ceil(lo / step); i * step <= hi + step * 1e-9; i++) out.push(i * step);
    return out;
  }
  // An x-y plot frame: scales, axes with ticks and labels; returns the mapping functions.
  function frame(svg, box, xr, yr, xlabel, ylabel, categories) {
    var x = function (v) { return box.x + (v - xr[0]) / (xr[1] - xr[0] || 1) * box.w; };
    var y = function (v) { return box.y + box.h - (v - yr[0]) / (yr[1] - yr[0] || 1) * box.h; };
    sv('rect', {x: box.x, y: box.y, width: box.w, height: box.h, fill: 'none', stroke: '#999'}, svg);
    ticks(xr[0], xr[1], 6).forEach(function (v) {
      sv('line', {x1: x(v), x2: x(v), y1: box.y + box.h, y2: box.y + box.h + 4, stroke: '#999'}, svg);
      sv('text', {x: x(v), y: box.y + box.h + 16, 'text-anchor': 'middle'}, svg, fmt(v));
    });
    if (!categories) ticks(yr[0], yr[1], 5).forEach(function (v) {
      sv('line', {x1: box.x - 4, x2: box.x, y1: y(v), y2: y(v), stroke: '#999'}, svg);
      sv('text', {x: box.x - 6, y: y(v) + 4, 'text-anchor': 'end'}, svg, fmt(v));
    });
    sv('text', {x: box.x + box.w / 2, y: box.y + box.h + 34, 'text-anchor': 'middle'}, svg, xlabel);
    sv('text', {x: 14, y: box.y + box.h / 2, 'text-anchor': 'middle',
                transform: 'rotate(-90 14 ' + (box.y + box.h / 2) + ')'}, svg, ylabel);
    return {x: x, y: y};
  }
  // Stacked bars, one per category, with the legend to the right of the data.
  function stackedBars(parent, categories, parts, unit, scale) {
    var w = 880, h = 60 + 34 * categories.length, box = {x: 150, y: 10, w: 380, h: h - 50};
    var svg = sv('svg', {width: w, height: h, role: 'img'}, parent);
    var totals = categories.map(function (_, i) {
      return parts.reduce(function (s, p) { return s + (p.values[i] || 0) * scale; }, 0);
    });
    var max = Math.max.apply(null, totals.concat([1e-12]));
    var f = frame(svg, box, [0, max], [0, categories.length], unit, '', true);
    categories.forEach(function (c, i) {
      var at = 0, top = f.y(categories.length - i) + 4, height = box.h / categories.length - 8;
      sv('text', {x: box.x - 8, y: top + height / 2 + 4, 'text-anchor': 'end'}, svg, c);
      parts.forEach(function (p) {
        var v = (p.values[i] || 0) * scale;
        if (v <= 0) return;
        var r = sv('rect', {x: f.x(at), y: top, width: Math.max(f.x(at + v) - f.x(at), 0.5),
                            height: height, fill: p.colour}, svg);
        sv('title', {}, r, c + ': ' + p.name + ' ' + fmt(v) + ' ' + unit);
        at += v;
      });
    });
    parts.forEach(function (p, i) {
      sv('rect', {x: box.x + box.w + 20, y: box.y + 4 + 16 * i, width: 10, height: 10,
                  fill: p.colour}, svg);
      sv('text', {x: box.x + box.w + 34, y: box.y + 13 + 16 * i}, svg, p.name);
    });
    return svg;
  }
  function breakdownParts(list) {
    return PARTS.map(function (p) {
      return {name: p[1], colour: p[2], values: list.map(function (b) { return b ? b[p[0]] || 0 : 0; })};
    });
  }

  // ---- a sweep's variants -------------------------------------------------------------------
  function layoutText(r) {
    var parts = [];
    [['gpu', ''], ['gpus', ' GPUs'], ['tp', 'tp '], ['cp', 'cp '], ['pp', 'pp '], ['dp', 'dp '],
     ['mbs', 'mbs '], ['interleave', 'interleave ']].forEach(function (k) {
      if (k[0] in r) parts.push(k[1].endsWith(' ') ? k[1] + r[k[0]] : r[k[0]] + k[1]);
    });
    return parts.join(' · ');
  }
  function front(points, xk, yk) {
    var sorted = points.slice().sort(function (a, b) { return a[xk] - b[xk] || a[yk] - b[yk]; });
    var out = [], best = Infinity;
    sorted.forEach(function (p) { if (p[yk] < best) { out.push(p); best = p[yk]; } });
    return out;
  }
  function renderSweep(rows, source) {
    var r0 = rows[0];
    var gk = pick(r0, ['gpu', 'gpu_type']), fk = pick(r0, ['feasible', 'fits']);
    var rk = pick(r0, ['reason', 'dropped_reason', 'why']);
    var xk = pick(r0, ['time_to_train_h', 'time_to_train_hours', 'step_time_s']);
    var yk = pick(r0, ['operational_kg', 'operational_t', 'sci_kg', 'energy_kwh', 'memory_gib']);
    var ok = rows.filter(function (r) { return !fk || Number(r[fk]) === 1; });
    var s = section('Sweep: ' + rows.length + ' configurations, ' + ok.length + ' feasible',
                    'From ' + source + '. Hover a point for its configuration; the GPU types ' +
                    'below filter the front, the heat map and the carbon account.');
    if (rk) {
      var why = {};
      rows.forEach(function (r) { if (r[rk] !== '' && (!fk || Number(r[fk]) !== 1)) why[r[rk]] = (why[r[rk]] || 0) + 1; });
      var reasons = Object.keys(why).sort(function (a, b) { return why[b] - why[a]; });
      if (reasons.length) {
        el('h3', {}, s, 'Dropped configurations');
        table(s, ['reason', 'configurations'], reasons.map(function (k) { return [k, why[k]]; }));
      }
    }
    var gpus = gk ? Array.from(new Set(rows.map(function (r) { return String(r[gk]); }))) : ['all'];
    var colour = {};
    gpus.forEach(function (g, i) { colour[g] = PALETTE[i % PALETTE.length]; });
    var shown = {};
    gpus.forEach(function (g) { shown[g] = true; });
    var filters = el('p', {'class': 'filters'}, s, 'GPU types: ');
    gpus.forEach(function (g) {
      var l = el('label', {}, filters), box = el('input', {type: 'checkbox', 'data-gpu': g}, l);
      box.checked = true;
      el('span', {'class': 'swatch', style: 'background:' + colour[g]}, l);
      l.appendChild(document.createTextNode(g));
      box.addEventListener('change', function () { shown[g] = box.checked; draw(); });
    });
    var plot = el('div', {'class': 'pareto'}, s), heat = el('div', {}, s), account = el('div', {}, s);
    function draw() {
      var vis = ok.filter(function (r) { return !gk || shown[String(r[gk])]; });
      plot.textContent = ''; heat.textContent = ''; account.textContent = '';
      if (xk && yk) drawFront(plot, vis, gk, xk, yk, colour);
      drawHeat(heat, rows.filter(function (r) { return !gk || shown[String(r[gk])]; }), fk, rk);
      drawAccount(account, vis, xk, yk);
    }
    draw();
  }
  function unitOf(k) {
    var names = {time_to_train_h: 'time to train (h)', time_to_train_hours: 'time to train (h)',
                 step_time_s: 'step time (s)', operational_kg: 'operational carbon (kg CO2e)',
                 operational_t: 'operational carbon (t CO2e)', sci_kg: 'carbon, SCI (kg CO2e)',
                 energy_kwh: 'energy (kWh)', tokens_per_s: 'tokens/s', memory_gib: 'GPU memory (GiB)'};
    return names[k] || k;
  }
  function drawFront(parent, vis, gk, xk, yk, colour) {
    el('h3', {}, parent, 'Pareto front: ' + unitOf(xk) + ' against ' + unitOf(yk));
    if (!vis.length) { el('p', {'class': 'note'}, parent, 'No feasible configuration is shown.'); return; }
    var xs = vis.map(function (r) { return r[xk]; }), ys = vis.map(function (r) { return r[yk]; });
    var pad = function (lo, hi) { var d = (hi - lo) * 0.05 || Math.abs(hi) * 0.05 || 1; return [lo - d, hi + d]; };
    var svg = sv('svg', {width: 860, height: 420, role: 'img'}, parent);
    var box = {x: 70, y: 10, w: 600, h: 360};
    var f = frame(svg, box, pad(Math.min.apply(null, xs), Math.max.apply(null, xs)),
                  pad(Math.min.apply(null, ys), Math.max.apply(null, ys)), unitOf(xk), unitOf(yk));
    var fr = front(vis, xk, yk);
    sv('polyline', {points: fr.map(function (r) { return f.x(r[xk]) + ',' + f.y(r[yk]); }).join(' '),
                    fill: 'none', stroke: '#222', 'stroke-width': 1.5}, svg);
    var onFront = new Set(fr);
    vis.forEach(function (r) {
      var c = sv('circle', {cx: f.x(r[xk]), cy: f.y(r[yk]), r: onFront.has(r) ? 5 : 3,
                            fill: gk ? colour[String(r[gk])] : PALETTE[0],
                            stroke: onFront.has(r) ? '#000' : 'none', 'class': 'point'}, svg);
      var text = layoutText(r) + ' — ' + fmt(r[xk]) + ' ' + unitOf(xk) + ', ' + fmt(r[yk]) + ' ' +
                 unitOf(yk) + (onFront.has(r) ? ' (on the front)' : '');
      sv('title', {}, c, text);
      c.addEventListener('mousemove', function (e) { showTip(e, text); });
      c.addEventListener('mouseleave', hideTip);
    });
    var lx = box.x + box.w + 16;
    Object.keys(colour).forEach(function (g, i) {
      sv('circle', {cx: lx + 5, cy: box.y + 10 + 16 * i, r: 4, fill: colour[g]}, svg);
      sv('text', {x: lx + 14, y: box.y + 14 + 16 * i}, svg, g);
    });
    var n = Object.keys(colour).length;
    sv('line', {x1: lx, x2: lx + 10, y1: box.y + 10 + 16 * n, y2: box.y + 10 + 16 * n, stroke: '#222'}, svg);
    sv('text', {x: lx + 14, y: box.y + 14 + 16 * n}, svg, 'Pareto front');
    el('p', {'class': 'note'}, parent, fr.length + ' configurations on the front (outlined).');
  }
  function drawHeat(parent, rows, fk, rk) {
    var r0 = rows[0], tk = pick(r0, ['tp']), pk = pick(r0, ['pp']);
    var vk = pick(r0, ['tokens_per_s', 'throughput_tokens_per_s']);
    if (!rows.length || !tk || !pk || !vk) return;
    el('h3', {}, parent, 'Best tokens/s by tensor (TP) and pipeline (PP) parallelism');
    var tps = Array.from(new Set(rows.map(function (r) { return r[tk]; }))).sort(function (a, b) { return a - b; });
    var pps = Array.from(new Set(rows.map(function (r) { return r[pk]; }))).sort(function (a, b) { return a - b; });
    var best = {}, why = {};
    rows.forEach(function (r) {
      var key = r[tk] + ',' + r[pk];
      if (!fk || Number(r[fk]) === 1) { if (!(key in best) || r[vk] > best[key].v) best[key] = {v: r[vk], r: r}; }
      else if (rk) why[key] = r[rk];
      else why[key] = 'does not fit';
    });
    var vals = Object.keys(best).map(function (k) { return best[k].v; });
    var lo = Math.min.apply(null, vals), hi = Math.max.apply(null, vals);
    var t = el('table', {'class': 'heat'}, parent), head = el('tr', {}, t);
    el('th', {'class': 'text'}, head, 'TP \\ PP');
    pps.forEach(function (p) { el('th', {}, head, 'PP ' + p); });
    tps.forEach(function (tp) {
      var tr = el('tr', {}, t);
      el('th', {'class': 'text'}, tr, 'TP ' + tp);
      pps.forEach(function (pp) {
        var key = tp + ',' + pp, b = best[key];
        if (b) {
          var q = hi > lo ? (b.v - lo) / (hi - lo) : 1;
          var td = el('td', {style: 'background: hsl(' + (220 - 160 * q) + ', 70%, ' + (88 - 30 * q) + '%)',
                             title: layoutText(b.r)}, tr, fmt(b.v));
          td.className = 'feasible';
        } else if (key in why) {
          el('td', {'class': 'infeasible', title: String(why[key])}, tr, 'infeasible');
        } else {
          el('td', {'class': 'absent'}, tr, 'not swept');
        }
      });
    });
    el('p', {'class': 'note'}, parent, 'Each cell: the best tokens/s of the feasible configurations ' +
       'with that TP and PP (over every GPU count, DP and GPU type shown). Hatched "infeasible" cells: ' +
       'every configuration there was dropped (hover for the reason, e.g. it does not fit in GPU memory).');
  }
  function drawAccount(parent, vis, xk, yk) {
    if (!vis.length) return;
    var keys = [['time_to_train_h', 'time to train (h)'], ['gpu_hours', 'GPU-hours'],
                ['energy_kwh', 'energy (kWh)'], ['operational_kg', 'operational carbon (kg CO2e)'],
                ['embodied_kg', 'embodied carbon (kg CO2e)'], ['sci_kg', 'total carbon (kg CO2e)'],
                ['grid_g_per_kwh', 'grid intensity (g CO2e/kWh)'], ['region', 'region']]
      .filter(function (k) { return k[0] in vis[0]; });
    if (!keys.length) return;
    var fastest = vis.reduce(function (a, b) { return b[xk] < a[xk] ? b : a; });
    var greenest = vis.reduce(function (a, b) { return b[yk] < a[yk] ? b : a; });
    el('h3', {}, parent, 'Carbon account: the fastest and the lowest-carbon configuration');
    table(parent, ['', 'fastest: ' + layoutText(fastest), 'lowest carbon: ' + layoutText(greenest)],
          keys.map(function (k) { return [k[1], fastest[k[0]], greenest[k[0]]]; }));
  }

  // ---- an estimate, a replay, a carbon answer -----------------------------------------------
  function renderEstimate(e, source) {
    var l = e.layout || {}, m = e.model || {};
    var s = section('Estimate: ' + (m.name || 'model') + ' on ' + l.gpus + ' × ' + l.gpu,
                    'From ' + source + '. Layout: tp ' + l.tp + ' · cp ' + l.cp + ' · pp ' + l.pp +
                    ' · dp ' + l.dp + ' · mbs ' + l.mbs + ' · gbs ' + l.gbs + ' · interleave ' + l.interleave + '.');
    var rows = [['step time (s)', e.step_time_s], ['tokens/s', e.tokens_per_s], ['MFU', e.mfu]];
    if (e.step_time_range && e.step_time_range.known)
      rows.push(['step time range (s)', fmt(e.step_time_range.low_s) + ' – ' + fmt(e.step_time_range.high_s)]);
    if (e.memory) rows.push(['GPU memory used (GiB of capacity)', fmt(e.memory.total_bytes / 1073741824) +
                             ' of ' + fmt(e.memory.capacity_bytes / 1073741824)]);
    table(s, ['', 'value'], rows);
    el('h3', {}, s, 'Step breakdown');
    stackedBars(s, ['step'], breakdownParts([e.breakdown]), 'time (s)', 1e-6);
    if (e.stages && e.stages.length) {
      el('h3', {}, s, 'Per pipeline stage');
      stackedBars(s, e.stages.map(function (st) { return 'stage ' + st.stage; }),
                  breakdownParts(e.stages.map(function (st) { return st.breakdown; })), 'time (s)', 1e-6);
    }
    if ('energy_kwh' in e || 'operational_kg' in e) renderCarbon(e, source, true);
  }
  function renderReplay(r, source) {
    var s = section('Replay: ' + (r.input || source), 'From ' + source + '.');
    if (r.steps && r.steps.length)
      table(s, ['step', 'rank', 'measured (ms)', 'replayed (ms)', 'error (%)'], r.steps.map(function (st) {
        return [st.name, st.rank, st.measured_us / 1000, st.replayed_us / 1000, st.error_pct];
      }));
    if (r.breakdown) {
      el('h3', {}, s, 'Step breakdown');
      var names = ['replayed'], list = [r.breakdown];
      if (r.measured_breakdown) { names.unshift('measured'); list.unshift(r.measured_breakdown); }
      stackedBars(s, names, breakdownParts(list), 'time (ms)', 1e-3);
    }
    if (r.ranks && r.ranks.length) {
      el('h3', {}, s, 'Per rank');
      if (r.slowest_rank)
        el('p', {'class': 'note'}, s, 'Slowest rank: ' + r.slowest_rank.rank + ' (' +
           fmt(r.slowest_rank.replayed_us / 1000) + ' ms)' + (r.straggler ? '; the rank the others ' +
           'waited on most: ' + r.straggler.rank + ' (' + fmt(r.straggler.waited_on_us / 1000) + ' ms)' : '') + '.');
      if (r.ranks[0].breakdown) {
        stackedBars(s, r.ranks.map(function (k) { return 'rank ' + k.rank; }),
                    breakdownParts(r.ranks.map(function (k) { return k.breakdown; })), 'time (ms)', 1e-3);
      } else {
        stackedBars(s, r.ranks.map(function (k) { return 'rank ' + k.rank; }),
                    [{name: 'replayed step', colour: PALETTE[0], values: r.ranks.map(function (k) { return k.replayed_us; })}],
                    'time (ms)', 1e-3);
      }
    }
    var cp = r.critical_path;
    if (cp) {
      el('h3', {}, s, 'Critical path (' + fmt(cp.length_us / 1000) + ' ms)');
      table(s, ['part', 'time (ms)'], [['CPU', cp.cpu_us / 1000], ['GPU compute', cp.compute_us / 1000],
            ['communication', cp.comm_us / 1000], ['memory copies', cp.memory_us / 1000],
            ['waits between ops (launch and dependency lags)', (cp.lag_us || 0) / 1000]]);
    }
  }
  function renderCarbon(c, source, inside) {
    var s = inside ? main.lastChild : section('Carbon account', 'From ' + source + (c.subject ? ': ' + c.subject : '') + '.');
    if (inside) el('h3', {}, s, 'Carbon account');
    var rows = [['GPU energy (kWh)', 'gpu_energy_kwh'], ['node energy (kWh)', 'node_energy_kwh'],
                ['facility energy (kWh)', 'facility_energy_kwh'], ['total energy (kWh)', 'energy_kwh'],
                ['grid intensity (g CO2e/kWh)', 'grid_g_per_kwh'], ['operational carbon (kg CO2e)', 'operational_kg'],
                ['embodied carbon (kg CO2e)', 'embodied_kg'], ['total carbon (kg CO2e)', 'sci_kg'],
                ['time to train (h)', 'hours']].filter(function (k) { return k[1] in c; });
    table(s, ['', 'value'], rows.map(function (k) { return [k[0], c[k[1]]]; }));
    if ('operational_kg' in c && 'embodied_kg' in c)
      stackedBars(s, ['carbon'], [{name: 'operational', colour: '#d62728', values: [c.operational_kg]},
                                  {name: 'embodied', colour: '#8c564b', values: [c.embodied_kg]}], 'kg CO2e', 1);
    if (c.grid) el('p', {'class': 'note'}, s, 'Grid: ' + c.grid);
  }

  var drawn = 0;
  Array.prototype.forEach.call(document.querySelectorAll('script.lumos-data'), function (node) {
    var data = JSON.parse(node.textContent), kind = node.getAttribute('data-kind');
    var source = node.getAttribute('data-source');
    if (kind === 'sweep') renderSweep(data, source);
    else if (kind === 'estimate') renderEstimate(data, source);
    else if (kind === 'replay') renderReplay(data, source);
    else if (kind === 'carbon') renderCarbon(data, source, false);
    drawn++;
  });
  marker('lumos-rendered', 'rendered ' + drawn + ' sections');
})();
)JS";

}  // namespace lumos::report
