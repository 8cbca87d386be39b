// The cruxe web console: a page that speaks MCP to this server's /mcp like any
// other client (run_cypher, get_node, index_status), with the same bearer
// token, kept in sessionStorage. No second API: what the tools refuse (writes,
// files, a missing token) the console cannot do either.
'use strict';

const $ = (id) => document.getElementById(id);
const PROTOCOL = '2025-06-18';
// No token budget in a console: the row cap bounds the answer.
const NO_BUDGET = 1e15;

const state = {
  session: null,
  token: sessionStorage.getItem('cruxe-token') || '',
  nextId: 1,
  target: null, // {repo, ref}
  cy: null,
  order: [], // graph node ids, for keyboard moves
  focus: -1,
};

class AuthNeeded extends Error {}

class ToolError extends Error {
  constructor(error) {
    super(error.message || 'the tool failed');
    this.code = error.code || 'error';
    this.data = error.data;
  }
}

// ---------------------------------------------------------------------------
// MCP over Streamable HTTP

async function post(message) {
  const headers = {
    'Content-Type': 'application/json',
    Accept: 'application/json, text/event-stream',
    'MCP-Protocol-Version': PROTOCOL,
  };
  if (state.session) headers['Mcp-Session-Id'] = state.session;
  if (state.token) headers.Authorization = 'Bearer ' + state.token;
  const resp = await fetch('/mcp', { method: 'POST', headers, body: JSON.stringify(message) });
  if (resp.status === 401) throw new AuthNeeded();
  const sid = resp.headers.get('mcp-session-id');
  if (sid) state.session = sid;
  const text = await resp.text();
  if (resp.status === 404 && state.session) {
    state.session = null; // the server forgot the session (restarted): start again
    throw new Error('session expired');
  }
  if (!resp.ok) throw new Error(`HTTP ${resp.status}: ${text}`);
  if (!('id' in message)) return null;
  let reply = null;
  if ((resp.headers.get('content-type') || '').includes('text/event-stream')) {
    for (const line of text.split('\n')) {
      if (!line.startsWith('data:')) continue;
      const data = line.slice(5).trim();
      if (!data) continue;
      const m = JSON.parse(data);
      if (m.id === message.id) reply = m;
    }
  } else {
    reply = JSON.parse(text);
  }
  if (!reply) throw new Error('the server gave no answer');
  if (reply.error) throw new Error(reply.error.message);
  return reply.result;
}

async function connect() {
  state.session = null;
  await post({
    jsonrpc: '2.0', id: state.nextId++, method: 'initialize',
    params: { protocolVersion: PROTOCOL, capabilities: {}, clientInfo: { name: 'cruxe-console', version: '1' } },
  });
  await post({ jsonrpc: '2.0', method: 'notifications/initialized' });
}

async function tool(name, args) {
  const call = () => post({ jsonrpc: '2.0', id: state.nextId++, method: 'tools/call', params: { name, arguments: args } });
  if (!state.session) await connect();
  let result;
  try {
    result = await call();
  } catch (e) {
    if (e instanceof AuthNeeded || e.message !== 'session expired') throw e;
    await connect();
    result = await call();
  }
  const out = result.structuredContent
    || JSON.parse((result.content && result.content[0] && result.content[0].text) || '{}');
  if (result.isError) throw new ToolError(out.error || { message: JSON.stringify(out) });
  return out;
}

function scoped(args) {
  return state.target ? { ...args, repo: state.target.repo, ref: state.target.ref } : args;
}

// ---------------------------------------------------------------------------
// Token

function askToken() {
  clearData();
  $('server').textContent = 'waiting for the token';
  $('token-form').hidden = false;
  $('token-input').focus();
}

function clearData() {
  $('table-view').replaceChildren();
  $('schema').replaceChildren();
  $('summary').textContent = '';
  $('details').hidden = true;
  $('legend').replaceChildren();
  if (state.cy) { state.cy.destroy(); state.cy = null; }
}

async function guarded(work) {
  try {
    return await work();
  } catch (e) {
    if (e instanceof AuthNeeded) { askToken(); return undefined; }
    throw e;
  }
}

// ---------------------------------------------------------------------------
// Repositories, schema, examples

async function loadTargets() {
  const status = await tool('index_status', {});
  const select = $('target');
  select.replaceChildren();
  const targets = [];
  for (const r of status.repos) {
    for (const ref of r.refs) targets.push({ repo: r.repo, ref: ref.ref, default: ref.ref === r.default_ref });
  }
  for (const t of targets) {
    const o = document.createElement('option');
    o.value = JSON.stringify({ repo: t.repo, ref: t.ref });
    o.textContent = `${t.repo} @ ${t.ref}`;
    select.append(o);
  }
  const first = targets.find((t) => t.default) || targets[0];
  if (first) {
    select.value = JSON.stringify({ repo: first.repo, ref: first.ref });
    state.target = { repo: first.repo, ref: first.ref };
  }
  $('target-label').hidden = targets.length < 2;
  const ready = status.repos.filter((r) => r.indexing_status === 'ready').length;
  $('server').textContent = `${status.repos.length} repositor${status.repos.length === 1 ? 'y' : 'ies'}, ${ready} ready`;
}

async function cypher(query, params, limit) {
  return tool('run_cypher', scoped({ query, params: params || {}, limit: limit || 1000, max_tokens: NO_BUDGET }));
}

async function loadSchema() {
  const box = $('schema');
  box.textContent = 'reading…';
  const tables = await cypher('CALL show_tables() RETURN *');
  const nameAt = tables.columns.indexOf('name');
  const typeAt = tables.columns.indexOf('type');
  const list = tables.rows.map((r) => ({ name: r[nameAt], type: r[typeAt] }));
  list.sort((a, b) => (a.type === b.type ? a.name.localeCompare(b.name) : a.type === 'NODE' ? -1 : 1));
  const parts = [];
  for (const t of list) {
    const info = await cypher(`CALL table_info('${t.name}') RETURN *`);
    const pn = info.columns.indexOf('name');
    const pt = info.columns.indexOf('type');
    const count = await cypher(t.type === 'NODE'
      ? `MATCH (n:${t.name}) RETURN count(n)`
      : `MATCH ()-[r:${t.name}]->() RETURN count(r)`);
    const d = document.createElement('details');
    d.dataset.table = t.name;
    d.dataset.kind = t.type;
    const s = document.createElement('summary');
    s.innerHTML = `<span class="name"></span> <span class="count"></span>`;
    s.querySelector('.name').textContent = t.type === 'NODE' ? `(${t.name})` : `[${t.name}]`;
    s.querySelector('.count').textContent = Number(count.rows[0][0]).toLocaleString();
    const ul = document.createElement('ul');
    for (const p of info.rows) {
      const li = document.createElement('li');
      li.textContent = `${p[pn]}: ${p[pt]}`;
      ul.append(li);
    }
    d.append(s, ul);
    parts.push(d);
  }
  box.replaceChildren(...parts);
}

// Each scoped to the chosen repo/ref and bounded, so that it says something
// on any repository (a big one included) and its graph stays readable.
const NOT_TEST = "NOT (s.path CONTAINS 'test' OR s.name STARTS WITH 'test' OR s.name STARTS WITH 'Test')";
const EXAMPLES = [
  ['Symbols by kind',
    'MATCH (s:Symbol) WHERE s.repo = $repo AND s.ref = $ref\nRETURN s.kind AS kind, count(*) AS n ORDER BY n DESC'],
  ['Most-called functions',
    `MATCH (c)-[:CALLS]->(s:Symbol) WHERE s.repo = $repo AND s.ref = $ref AND ${NOT_TEST}\nRETURN s.qualified_name AS function, s.path AS path, count(c) AS call_sites ORDER BY call_sites DESC LIMIT 20`],
  ['Callers of the most-called function (graph)',
    `MATCH (c)-[:CALLS]->(s:Symbol) WHERE s.repo = $repo AND s.ref = $ref AND ${NOT_TEST}\nWITH s, count(c) AS n ORDER BY n DESC LIMIT 1\nMATCH p = (c)-[:CALLS* SHORTEST 1..2]->(s) RETURN p LIMIT 60`],
  ['Ancestors of a method (CONTAINS)',
    "MATCH (s:Symbol) WHERE s.repo = $repo AND s.ref = $ref AND s.kind = 'method'\nWITH s LIMIT 1\nMATCH p = (a)-[:CONTAINS*1..10]->(s) RETURN p"],
  ['Imports of the file that imports most (graph)',
    'MATCH (f:File)-[:IMPORTS]->(t) WHERE f.repo = $repo AND f.ref = $ref\nWITH f, count(t) AS n ORDER BY n DESC LIMIT 1\nMATCH (f)-[i:IMPORTS]->(t) RETURN f, i, t LIMIT 60'],
  ['Never-called functions outside tests',
    `MATCH (s:Symbol) WHERE s.repo = $repo AND s.ref = $ref AND s.kind IN ['fn', 'method'] AND ${NOT_TEST}\n  AND s.name <> 'main' AND NOT EXISTS { MATCH ()-[:CALLS|REFERENCES]->(s) }\nRETURN s.qualified_name AS never_called, s.path AS path ORDER BY path, never_called LIMIT 100`],
  ['Call cycles',
    'MATCH (a:Symbol)-[:CALLS]->(b:Symbol) WHERE a.repo = $repo AND a.ref = $ref\n  AND (a.id = b.id OR EXISTS { MATCH (b)-[:CALLS* SHORTEST 1..5]->(a) })\nRETURN DISTINCT a.qualified_name AS on_a_cycle ORDER BY on_a_cycle LIMIT 100'],
  ['Files with most unresolved imports',
    'MATCH (f:File)-[:IMPORTS]->(x:External) WHERE f.repo = $repo AND f.ref = $ref\nRETURN f.path, count(x) AS unresolved ORDER BY unresolved DESC LIMIT 10'],
];

function showExamples() {
  const ul = $('examples');
  for (const [title, query] of EXAMPLES) {
    const li = document.createElement('li');
    const b = document.createElement('button');
    b.type = 'button';
    b.textContent = title;
    b.addEventListener('click', () => { $('editor').value = query; run(); });
    li.append(b);
    ul.append(li);
  }
}

// ---------------------------------------------------------------------------
// Running a query

async function run() {
  const query = $('editor').value.trim();
  if (!query) return;
  history.replaceState(null, '', '/?q=' + encodeURIComponent(query));
  const limit = Math.max(1, Math.min(10000, Number($('limit').value) || 1000));
  $('error').hidden = true;
  $('summary').textContent = 'running…';
  $('summary').className = '';
  const t0 = performance.now();
  let answer;
  try {
    answer = await guarded(() => cypher(query, {}, limit));
  } catch (e) {
    // The old result must not read as this query's.
    clearResult();
    showError(e);
    $('summary').textContent = '';
    return;
  }
  if (!answer) return;
  const waited = performance.now() - t0;
  const t1 = performance.now();
  renderTable(answer);
  const rendered = performance.now() - t1;
  const summary = $('summary');
  summary.dataset.rows = String(answer.rows.length);
  summary.dataset.renderMs = rendered.toFixed(1);
  summary.textContent = `${answer.rows.length} row${answer.rows.length === 1 ? '' : 's'}`
    + (!answer.truncated ? ''
      : answer.rows.length >= limit ? ` — truncated at the row cap (${limit}); more rows exist`
        : ' — truncated at the answer size limit; more rows exist')
    + ` · answered in ${waited.toFixed(0)} ms · table drawn in ${rendered.toFixed(0)} ms`;
  summary.className = answer.truncated ? 'partial' : '';
  const graph = graphOf(answer.rows);
  graph.roots = rootsOf(answer);
  $('tab-graph').disabled = graph.nodes.size === 0;
  if (graph.nodes.size > 0) {
    showTab('graph');
    drawGraph(graph);
  } else {
    showTab('table');
  }
}

/** Empties the table, the graph and the details: nothing of an older answer stays. */
function clearResult() {
  $('table-view').replaceChildren();
  if (state.cy) { state.cy.destroy(); state.cy = null; }
  $('legend').replaceChildren();
  $('details').hidden = true;
  $('tab-graph').disabled = true;
  showTab('table');
}

function showError(e) {
  const box = $('error');
  box.replaceChildren();
  const code = document.createElement('span');
  code.className = 'code';
  const text = document.createElement('div');
  if (e instanceof ToolError) {
    code.textContent = e.code;
    const hint = {
      query_not_read_only: 'The console only reads the graph: this query would change it and was not run.',
      query_timeout: 'The query ran past the time limit and was stopped.',
      query_invalid: 'The query is not valid Cypher:',
      query_too_large: 'The answer passed the size limit: narrow the query or lower the row cap.',
      index_not_ready: 'The repository is still being indexed: run the query again in a moment.',
    }[e.code];
    text.textContent = (hint ? hint + '\n' : '') + e.message;
  } else {
    code.textContent = 'error';
    text.textContent = e.message;
  }
  box.append(code, text);
  box.hidden = false;
}

function cellText(v) {
  if (v === null || v === undefined) return '';
  if (typeof v === 'object') {
    if (v._label === 'Symbol') return `(Symbol ${v.kind} ${v.qualified_name || v.name} · ${v.path}:${v.line_start})`;
    if (v._label && v._id) return `(${v._label} ${v.path || v.name || v.id || v._id})`;
    if (v._label && v._src) return `[${v._label}]`;
    if (v._rels) return `path of ${v._rels.length} relationship${v._rels.length === 1 ? '' : 's'}`;
    return JSON.stringify(v);
  }
  return String(v);
}

function renderTable(answer) {
  const table = document.createElement('table');
  table.className = 'rows';
  const head = table.createTHead().insertRow();
  for (const c of answer.columns) {
    const th = document.createElement('th');
    th.textContent = c;
    head.append(th);
  }
  const body = table.createTBody();
  // Built off the document and added once: a 1,000-row answer is one layout.
  const frag = document.createDocumentFragment();
  for (const r of answer.rows) {
    const tr = document.createElement('tr');
    for (const v of r) {
      const td = document.createElement('td');
      td.textContent = cellText(v);
      if (v && typeof v === 'object') td.title = JSON.stringify(v, null, 1);
      tr.append(td);
    }
    frag.append(tr);
  }
  body.append(frag);
  $('table-view').replaceChildren(table);
}

// ---------------------------------------------------------------------------
// Graph view

/** The nodes and relationships anywhere in the rows (paths included). */
function graphOf(rows) {
  const nodes = new Map();
  const edges = new Map();
  const visit = (v) => {
    if (!v || typeof v !== 'object') return;
    if (Array.isArray(v)) { v.forEach(visit); return; }
    if (v._label && v._id) { nodes.set(v._id, v); return; }
    if (v._label && v._src && v._dst) {
      edges.set(`${v._src}-${v._label}-${v._dst}`, v);
      return;
    }
    if (v._rels) { (v._nodes || []).forEach(visit); v._rels.forEach(visit); return; }
    Object.values(v).forEach(visit);
  };
  rows.forEach(visit);
  // A path's ends are not among its inner nodes: a relationship's end not seen
  // as a node gets a placeholder, filled in when it is expanded or clicked.
  for (const e of edges.values()) {
    for (const end of [e._src, e._dst]) if (!nodes.has(end)) nodes.set(end, { _id: end, _label: '?' });
  }
  return { nodes, edges };
}

// A node's colour says what it is: a Symbol by its kind's family, any other
// node by its table. An edge's colour says its type. The legend lists those
// present (`legendOf`).
const KIND_FAMILY = {
  fn: 'function', method: 'function', function: 'function', constructor: 'function',
  struct: 'type', class: 'type', trait: 'type', interface: 'type', enum: 'type', type: 'type', impl: 'type', union: 'type',
};
const NODE_COLORS = {
  function: ['#2456c7', 'function / method'], type: ['#0b7d80', 'type (struct, class, trait, interface…)'],
  symbol: ['#6b5bb5', 'other symbol (module, constant, variable…)'],
  File: ['#1f8a4c', 'File'], Package: ['#a05a00', 'Package'], External: ['#8a8f95', 'External (outside the repo)'],
  Name: ['#b8b8b8', 'Name (an unresolved call)'], Ref: ['#555', 'Ref'], Repo: ['#333', 'Repo'], '?': ['#d0d0d0', 'not returned (expand it)'],
};
const EDGE_COLORS = {
  CALLS: '#d9480f', REFERENCES: '#9c36b5', CONTAINS: '#98a2ab', IMPORTS: '#2b8a3e', IMPLEMENTS: '#e8590c',
  EXTENDS: '#c2255c', UNRESOLVED: '#c8c8c8', IN_PACKAGE: '#a05a00', HAS_FILE: '#777', HAS_REF: '#777',
};

function nodeClass(n) {
  return n._label === 'Symbol' ? KIND_FAMILY[n.kind] || 'symbol' : n._label in NODE_COLORS ? n._label : '?';
}

function nodeElement(n) {
  const caption = n._label === 'File' && n.path ? n.path.split('/').pop()
    : n.name || (n.path ? n.path.split('/').pop() : '') || n.id || n._id;
  const cls = nodeClass(n);
  return { group: 'nodes', data: { id: n._id, caption: String(caption), color: NODE_COLORS[cls][0], cls, props: n } };
}

function edgeElement(key, e) {
  return { group: 'edges', data: { id: key, source: e._src, target: e._dst, label: e._label, color: EDGE_COLORS[e._label] || '#9aa4ad', props: e } };
}

/**
 * Captions that read alike get told apart: a file by as much of its path as
 * it takes (`tests/test_a.py`, `geo/test_a.py`), a symbol by its file.
 */
function distinctCaptions(cy) {
  const groups = new Map();
  cy.nodes().forEach((n) => {
    const c = n.data('caption');
    if (!groups.has(c)) groups.set(c, []);
    groups.get(c).push(n);
  });
  for (const same of groups.values()) {
    if (same.length < 2) continue;
    for (let parts = 2; parts <= 8; parts++) {
      const captions = same.map((n) => {
        const p = n.data('props');
        const path = (p.path || '').split('/');
        const place = path.slice(-parts + (p._label === 'File' ? 0 : 1)).join('/');
        return p._label === 'File' ? place : `${p.name || p._id} · ${place}`;
      });
      same.forEach((n, i) => n.data('caption', captions[i]));
      if (new Set(captions).size === captions.length) break;
    }
  }
}

/**
 * The nodes a query is about, marked on the graph: the nodes of the first
 * column that holds nodes (`RETURN f, i, t` is about `f`), or, for paths, the
 * end every path shares (the callee of its callers); none when neither says.
 */
function rootsOf(answer) {
  const roots = new Set();
  const ends = new Map();
  let paths = 0;
  for (const row of answer.rows) {
    const first = row.find((v) => v && typeof v === 'object' && (v._rels || (v._label && v._id && !v._src)));
    if (!first) continue;
    if (first._rels) {
      if (first._rels.length === 0) continue;
      paths += 1;
      // A path's ends touch one of its relationships, its inner nodes two.
      const touches = new Map();
      for (const r of first._rels) for (const id of [r._src, r._dst]) touches.set(id, (touches.get(id) || 0) + 1);
      for (const [id, t] of touches) if (t === 1) ends.set(id, (ends.get(id) || 0) + 1);
    } else {
      roots.add(first._id);
    }
  }
  for (const [id, count] of ends) if (paths > 1 && count === paths) roots.add(id);
  return roots;
}

/** The node and edge kinds a graph shows, for its legend. */
function legendOf(cy) {
  const box = $('legend');
  box.replaceChildren();
  const item = (swatch, text, count) => {
    const li = document.createElement('li');
    li.append(swatch, document.createTextNode(` ${text} (${count})`));
    return li;
  };
  const nodes = new Map();
  cy.nodes().forEach((n) => nodes.set(n.data('cls'), (nodes.get(n.data('cls')) || 0) + 1));
  const edges = new Map();
  cy.edges().forEach((e) => edges.set(e.data('label'), (edges.get(e.data('label')) || 0) + 1));
  const list = document.createElement('ul');
  for (const [cls, [color, text]] of Object.entries(NODE_COLORS)) {
    if (!nodes.has(cls)) continue;
    const dot = document.createElement('span');
    dot.className = 'dot';
    dot.style.background = color;
    list.append(item(dot, text, nodes.get(cls)));
  }
  for (const [label, count] of edges) {
    const line = document.createElement('span');
    line.className = 'line';
    line.style.background = EDGE_COLORS[label] || '#9aa4ad';
    list.append(item(line, label, count));
  }
  const roots = cy.nodes('.root').length;
  if (roots > 0) {
    const ring = document.createElement('span');
    ring.className = 'dot root';
    list.append(item(ring, 'what the query is about', roots));
  }
  box.append(list);
  box.dataset.nodeKinds = [...nodes.keys()].join(',');
  box.dataset.edgeKinds = [...edges.keys()].join(',');
}

// Labels keep one size on screen at any zoom, and a node's label is drawn
// only where it overlaps no other drawn label (`placeLabels`, after every
// layout and zoom): the marked nodes first, then the best connected. The rest
// show on hover or selection. At 100 or 300 nodes, every label at once is a
// hairball.
const LABEL_FONT = 11;
const LABEL_FAMILY = 'Helvetica, Arial, sans-serif';
const perZoom = (px) => (ele) => px / ele.cy().zoom();
const GRAPH_STYLE = [
  { selector: 'node', style: { 'background-color': 'data(color)', label: '', width: 14, height: 14,
    'font-family': LABEL_FAMILY, 'font-size': perZoom(LABEL_FONT), 'text-valign': 'bottom', 'text-margin-y': perZoom(2),
    'text-background-color': '#fff', 'text-background-opacity': 0.8, 'text-background-padding': perZoom(1) } },
  { selector: 'node.labelled, node.hover, node:selected', style: { label: 'data(caption)' } },
  { selector: 'node.root', style: { width: 22, height: 22, 'border-width': 3, 'border-color': '#111', 'font-weight': 'bold' } },
  { selector: 'node.hover, node:selected', style: { 'z-index': 30, 'text-background-opacity': 1 } },
  { selector: 'node:selected', style: { 'border-width': 3, 'border-color': '#f0a000' } },
  { selector: 'edge', style: { width: 1.2, 'line-color': 'data(color)', 'target-arrow-color': 'data(color)', 'target-arrow-shape': 'triangle', 'curve-style': 'bezier',
    label: '', 'font-size': 8, color: '#6b757e', 'text-rotation': 'autorotate' } },
  { selector: 'edge:selected', style: { label: 'data(label)' } },
  { selector: 'edge[label = "UNRESOLVED"]', style: { 'line-style': 'dashed' } },
];

/**
 * Draws the labels that fit (see GRAPH_STYLE), most important first. Each
 * label's room is the box the renderer gives it (drawn for all of them at
 * once, then taken off those that do not fit), with a pixel to spare: an
 * estimate from the caption's width missed a bold label and the background's
 * padding, and labels placed apart could touch.
 */
function placeLabels(cy) {
  const w = cy.width();
  const h = cy.height();
  const placed = [];
  const nodes = cy.nodes().toArray().sort((a, b) => (b.hasClass('root') - a.hasClass('root')) || (b.degree() - a.degree()));
  cy.nodes().addClass('labelled');
  const rooms = nodes.map((n) => {
    const b = n.renderedBoundingBox({ includeNodes: false, includeLabels: true, includeEdges: false });
    const room = { x1: b.x1 - 1, x2: b.x2 + 1, y1: b.y1 - 1, y2: b.y2 + 1 };
    n.scratch('_labelRoom', room);
    return room;
  });
  cy.batch(() => {
    nodes.forEach((n, i) => {
      const box = rooms[i];
      const onScreen = box.x2 > 0 && box.x1 < w && box.y2 > 0 && box.y1 < h;
      const free = onScreen && !placed.some((o) => box.x1 < o.x2 && o.x1 < box.x2 && box.y1 < o.y2 && o.y1 < box.y2);
      if (free) placed.push(box);
      else n.removeClass('labelled');
    });
  });
  $('graph-view').dataset.labels = String(placed.length);
}

function drawGraph(graph) {
  if (state.cy) state.cy.destroy();
  const elements = [];
  for (const n of graph.nodes.values()) elements.push(nodeElement(n));
  for (const [k, e] of graph.edges) elements.push(edgeElement(k, e));
  const t0 = performance.now();
  state.cy = cytoscape({
    container: $('graph'),
    elements,
    style: GRAPH_STYLE,
    layout: { name: 'grid' },
    wheelSensitivity: 0.3,
  });
  for (const id of graph.roots || []) state.cy.getElementById(id).addClass('root');
  distinctCaptions(state.cy);
  state.cy.layout(layoutFor(state.cy)).run();
  state.cy.style().update();
  placeLabels(state.cy);
  // Labels are placed again once a zoom or pan comes to rest.
  let pending = null;
  state.cy.on('viewport', () => {
    clearTimeout(pending);
    pending = setTimeout(() => { if (state.cy) { state.cy.style().update(); placeLabels(state.cy); } }, 60);
  });
  const view = $('graph-view');
  view.dataset.nodes = String(state.cy.nodes().length);
  view.dataset.edges = String(state.cy.edges().length);
  view.dataset.layoutMs = (performance.now() - t0).toFixed(1);
  legendOf(state.cy);
  state.order = state.cy.nodes().map((n) => n.id());
  state.focus = -1;
  state.cy.on('tap', 'node', (ev) => showNode(ev.target));
  state.cy.on('dbltap', 'node', (ev) => expand(ev.target));
  state.cy.on('mouseover', 'node', (ev) => ev.target.addClass('hover'));
  state.cy.on('mouseout', 'node', (ev) => ev.target.removeClass('hover'));
}

/**
 * A force-directed layout that leaves room for the labels while it stays
 * quick (it runs on the page's only thread); past 150 nodes, in a few
 * milliseconds, rings around the marked nodes by distance, or (none marked)
 * rings by degree, the best connected in the middle.
 */
function layoutFor(cy) {
  const n = cy.nodes().length;
  return n <= 150
    ? { name: 'cose', animate: false, numIter: 1000, randomize: true,
      idealEdgeLength: () => 50, nodeRepulsion: () => 20000, nodeOverlap: 20, componentSpacing: 60, padding: 30 }
    : cy.nodes('.root').nonempty()
      // Rings by distance from what the query is about (callers of callers…).
      ? { name: 'breadthfirst', animate: false, roots: cy.nodes('.root'), circle: true, spacingFactor: 0.9, padding: 20 }
      : { name: 'concentric', animate: false, concentric: (node) => node.degree(), levelWidth: () => 2, minNodeSpacing: 6, padding: 20 };
}

async function showNode(node) {
  const n = node.data('props');
  const box = $('details');
  box.hidden = false;
  $('details-title').textContent = `${n._label} ${n.name || n.path || n.id || n._id}`;
  const props = $('details-props');
  props.replaceChildren();
  for (const [k, v] of Object.entries(n)) {
    if (k.startsWith('_') || k === 'doc' && !v) continue;
    const tr = props.insertRow();
    tr.insertCell().textContent = k;
    tr.insertCell().textContent = typeof v === 'object' ? JSON.stringify(v) : String(v);
  }
  const src = $('details-source');
  src.textContent = '';
  const id = n._label === 'Symbol' ? n.id : n._label === 'File' && n.path ? 'file:' + n.path : null;
  if (!id) return;
  try {
    const got = await guarded(() => tool('get_node', scoped({ node_id: id, max_tokens: 2000 })));
    if (got) src.textContent = numbered(got.content, got.content_line_start);
  } catch (e) {
    src.textContent = `(no source: ${e.message})`;
  }
}

function numbered(text, first) {
  return text.split('\n').map((l, i) => `${String(first + i).padStart(5)}  ${l}`).join('\n');
}

/** Adds a node's neighbours (by its table's key) to the graph. */
async function expand(node) {
  const n = node.data('props');
  if (!n._label || n._label === '?') return;
  const key = n._label === 'Repo' ? 'name' : 'id';
  if (n[key] === undefined) return;
  let answer;
  try {
    // Not the Name placeholders of unresolved calls: one per call the
    // resolver could not prove, they would bury the neighbours.
    answer = await guarded(() => cypher(`MATCH (n:${n._label} {${key}: $key})-[r]-(m) WHERE label(m) <> 'Name' RETURN n, r, m LIMIT 100`, { key: n[key] }, 100));
  } catch (e) {
    showError(e);
    return;
  }
  if (!answer) return;
  const g = graphOf(answer.rows);
  const added = [];
  for (const m of g.nodes.values()) {
    const existing = state.cy.getElementById(m._id);
    if (existing.nonempty()) {
      if (existing.data('props')._label === '?' && m._label !== '?') existing.data(nodeElement(m).data);
    } else {
      added.push(nodeElement(m));
    }
  }
  for (const [k, e] of g.edges) if (state.cy.getElementById(k).empty()) added.push(edgeElement(k, e));
  state.cy.add(added);
  distinctCaptions(state.cy);
  state.cy.layout(layoutFor(state.cy)).run();
  state.cy.style().update();
  placeLabels(state.cy);
  legendOf(state.cy);
  state.order = state.cy.nodes().map((x) => x.id());
  $('graph-view').dataset.nodes = String(state.cy.nodes().length);
}

function moveFocus(step) {
  if (!state.cy || state.order.length === 0) return;
  state.focus = (state.focus + step + state.order.length) % state.order.length;
  const n = state.cy.getElementById(state.order[state.focus]);
  state.cy.nodes().unselect();
  n.select();
  state.cy.center(n);
  $('graph-view').setAttribute('aria-label', `Graph: node ${state.focus + 1} of ${state.order.length}, ${n.data('caption')}`);
}

// ---------------------------------------------------------------------------
// Tabs, keys, start

function showTab(which) {
  const table = which === 'table';
  $('tab-table').setAttribute('aria-selected', String(table));
  $('tab-graph').setAttribute('aria-selected', String(!table));
  $('table-view').hidden = !table;
  $('graph-view').hidden = table;
  if (!table && state.cy) state.cy.resize();
}

function copyLink() {
  const link = location.origin + '/?q=' + encodeURIComponent($('editor').value.trim());
  const field = $('link');
  field.value = link;
  field.hidden = false;
  field.select();
  if (navigator.clipboard) navigator.clipboard.writeText(link).catch(() => {});
}

async function start() {
  showExamples();
  $('query-form').addEventListener('submit', (ev) => { ev.preventDefault(); run(); });
  $('editor').addEventListener('keydown', (ev) => {
    if (ev.key === 'Enter' && (ev.ctrlKey || ev.metaKey)) { ev.preventDefault(); run(); }
  });
  $('copy-link').addEventListener('click', copyLink);
  $('tab-table').addEventListener('click', () => showTab('table'));
  $('tab-graph').addEventListener('click', () => showTab('graph'));
  $('graph-view').addEventListener('keydown', (ev) => {
    if (ev.key === 'ArrowRight' || ev.key === 'ArrowDown') { ev.preventDefault(); moveFocus(1); }
    else if (ev.key === 'ArrowLeft' || ev.key === 'ArrowUp') { ev.preventDefault(); moveFocus(-1); }
    else if (ev.key === 'Enter' && state.focus >= 0) showNode(state.cy.getElementById(state.order[state.focus]));
    else if ((ev.key === 'e' || ev.key === 'E') && state.focus >= 0) expand(state.cy.getElementById(state.order[state.focus]));
  });
  $('target').addEventListener('change', () => {
    state.target = JSON.parse($('target').value);
    loadSchema().catch(showError);
  });
  $('token-button').addEventListener('click', () => { $('token-form').hidden = false; $('token-input').focus(); });
  $('token-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    state.token = $('token-input').value.trim();
    sessionStorage.setItem('cruxe-token', state.token);
    $('token-input').value = '';
    $('token-form').hidden = true;
    state.session = null;
    load();
  });
  const q = new URLSearchParams(location.search).get('q');
  if (q) $('editor').value = q;
  await load();
}

async function load() {
  document.body.dataset.ready = 'false';
  try {
    const ok = await guarded(async () => { await loadTargets(); return true; });
    if (!ok) return;
    if ($('editor').value.trim()) await run();
    await guarded(loadSchema);
  } catch (e) {
    showError(e);
  } finally {
    document.body.dataset.ready = 'true';
  }
}

start();
