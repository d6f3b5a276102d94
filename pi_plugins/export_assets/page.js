// Navigation for an exported pi session. The page is complete without this script (all
// branches show, one after another); with it, one branch shows at a time, as in pi.
// URL parameters: ?leafId=ID shows the branch ending there, ?targetId=ID scrolls to an
// entry (on its newest branch unless leafId says otherwise), ?view=all shows all branches.
(function () {
  'use strict';
  var doc = document;
  var body = doc.body;
  doc.documentElement.classList.add('js');

  function all(selector) { return Array.prototype.slice.call(doc.querySelectorAll(selector)); }

  var entries = all('#entries > .entry');
  var forks = all('#entries > .fork');
  var heads = all('#entries > .branch-head');
  var treeItems = new Map();
  var parentOf = new Map();
  var childrenOf = new Map();
  var entryById = new Map();

  entries.forEach(function (el) {
    var id = el.getAttribute('data-id');
    var parent = el.getAttribute('data-parent') || '';
    entryById.set(id, el);
    parentOf.set(id, parent);
    var list = childrenOf.get(parent);
    if (!list) { list = []; childrenOf.set(parent, list); }
    list.push(id); // the page lists children oldest first
  });
  all('#tree a[data-id]').forEach(function (a) { treeItems.set(a.getAttribute('data-id'), a.parentNode); });

  var showAll = false;
  var leaf = '';

  // Like pi: a branch is shown down to its newest leaf.
  function newestLeaf(id) {
    var children;
    while ((children = childrenOf.get(id)) && children.length) { id = children[children.length - 1]; }
    return id;
  }

  function pathTo(id) {
    var on = new Set(['']);
    while (id && !on.has(id)) { on.add(id); id = parentOf.get(id); }
    return on;
  }

  var shownPath = null; // the ids marked as the shown branch, from the last show()
  var shownAll = null;

  function setShown(id, shown) {
    var el = entryById.get(id);
    if (el && el.hidden === shown) { el.hidden = !shown; }
  }

  function markInTree(id, onPath) {
    var li = treeItems.get(id);
    if (li) { li.classList.toggle('on-path', onPath); }
  }

  // Show the branch from the root to newLeaf (or every branch, when showAll). Only
  // what changes is touched: on a 20,000-entry page, switching stays quick.
  function show(newLeaf) {
    var previousLeaf = leaf;
    leaf = entryById.has(newLeaf) ? newLeaf : newestLeaf('');
    var on = pathTo(leaf);
    body.classList.toggle('all-branches', showAll);
    body.classList.toggle('one-branch', !showAll);
    if (showAll !== shownAll || shownPath === null) {
      entries.forEach(function (el) { el.hidden = !showAll && !on.has(el.getAttribute('data-id')); });
      heads.forEach(function (el) { el.hidden = !showAll; });
    } else if (!showAll) {
      shownPath.forEach(function (id) { if (!on.has(id)) { setShown(id, false); } });
      on.forEach(function (id) { if (!shownPath.has(id)) { setShown(id, true); } });
    }
    forks.forEach(function (nav) {
      nav.hidden = !showAll && !on.has(nav.getAttribute('data-fork'));
      nav.querySelectorAll('a[data-branch]').forEach(function (a) {
        a.classList.toggle('selected', on.has(a.getAttribute('data-branch')));
      });
    });
    if (shownPath) { shownPath.forEach(function (id) { if (!on.has(id)) { markInTree(id, false); } }); }
    on.forEach(function (id) { markInTree(id, true); });
    var before = treeItems.get(previousLeaf);
    if (before) { before.classList.remove('selected'); }
    var now = treeItems.get(leaf);
    if (now) { now.classList.add('selected'); }
    shownPath = on;
    shownAll = showAll;
    var button = doc.querySelector('button[data-action="branches"]');
    if (button) { button.textContent = showAll ? 'One branch' : 'All branches'; }
  }

  function reveal(id) {
    var el = entryById.get(id);
    if (!el) { return; }
    if (el.hidden) { show(newestLeaf(id)); }
    el.scrollIntoView({ block: 'start' });
  }

  function toggleAll(selector) {
    var items = all(selector);
    var open = items.some(function (d) { return !d.open; });
    items.forEach(function (d) { d.open = open; });
  }

  var actions = {
    branches: function () { showAll = !showAll; show(leaf); },
    thinking: function () { toggleAll('details.thinking'); },
    output: function () { toggleAll('details.more'); }
  };

  doc.addEventListener('click', function (event) {
    var target = event.target.closest('button[data-action], a[data-branch], a[href^="#e-"]');
    if (!target) { return; }
    if (target.hasAttribute('data-action')) {
      actions[target.getAttribute('data-action')]();
    } else if (target.hasAttribute('data-branch')) {
      show(newestLeaf(target.getAttribute('data-branch')));
      if (!showAll) { event.preventDefault(); } // its heading is hidden; stay at the fork
    } else {
      var id = target.getAttribute('href').slice(3);
      var el = entryById.get(id);
      if (el && el.hidden) { show(newestLeaf(id)); } // then the link scrolls to it
    }
  });

  doc.addEventListener('keydown', function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey) { return; }
    if (event.target && event.target.id === 'tree-search') { return; } // typing a search
    var key = { b: 'branches', t: 'thinking', o: 'output' }[(event.key || '').toLowerCase()];
    if (key) { actions[key](); }
  });

  // ---------------------------------------------------------------- Markdown
  // Text marked .md is rendered (marked, code highlighted by highlight.js) as it nears
  // the screen, so a 20,000-entry page opens as fast as before. Raw HTML in the text is
  // shown as text, links go only to http(s), mailto and the page, and images are named,
  // not loaded: nothing in a session's text can add a script or fetch anything.
  function escapeHtml(text) {
    return String(text).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
      .replace(/"/g, '&quot;').replace(/'/g, '&#39;');
  }

  var markdown = null;
  if (window.marked && typeof window.marked.Marked === 'function') {
    markdown = new window.marked.Marked({ gfm: true, async: false });
    markdown.use({ renderer: {
      html: function (token) { return escapeHtml(token.raw || token.text || ''); },
      link: function (token) {
        var text = this.parser.parseInline(token.tokens);
        if (!/^(https?:|mailto:|#)/i.test(token.href || '')) { return text; }
        return '<a href="' + escapeHtml(token.href) + '" rel="noopener noreferrer">' + text + '</a>';
      },
      image: function (token) { return '<span class="md-image">[image: ' + escapeHtml(token.text || token.href) + ']</span>'; },
      code: function (token) {
        var lang = (token.lang || '').split(/\s/)[0];
        var body = escapeHtml(token.text);
        if (window.hljs && lang && window.hljs.getLanguage(lang)) {
          try { body = window.hljs.highlight(token.text, { language: lang, ignoreIllegals: true }).value; } catch (e) { /* plain */ }
        }
        return '<pre class="code"><code class="hljs' + (lang ? ' language-' + escapeHtml(lang) : '') + '">' + body + '</code></pre>';
      }
    } });
  }

  function renderMarkdown(el) {
    if (el.classList.contains('rendered') || !markdown) { return; }
    try {
      el.innerHTML = markdown.parse(el.textContent);
      el.classList.add('rendered');
    } catch (e) { /* left as written */ }
  }

  var toRender = all('.text.md');
  if (markdown && 'IntersectionObserver' in window) {
    var watcher = new IntersectionObserver(function (seen) {
      seen.forEach(function (item) {
        if (item.isIntersecting) { watcher.unobserve(item.target); renderMarkdown(item.target); }
      });
    }, { rootMargin: '1500px 0px' });
    toRender.forEach(function (el) { watcher.observe(el); });
  } else {
    toRender.forEach(renderMarkdown);
  }

  // ---------------------------------------------------------------- tree search and filters
  // As pi's page: a filter mode (default: no settings entries; no-tools; user; labeled;
  // all; answers of tool calls alone never) and words that must all be in an entry.
  var filterMode = 'default';
  var searchWords = [];
  var searchTexts = new Map(); // id -> the entry's text, lower case, made on the first search
  var treeStatus = doc.getElementById('tree-status');

  function passes(id, li) {
    if (id === leaf) { return true; }
    var kind = li.getAttribute('data-filter');
    if (kind === 'calls-only') { return false; }
    var ok = filterMode === 'all' ? true
      : filterMode === 'user-only' ? kind === 'user'
      : filterMode === 'labeled-only' ? li.hasAttribute('data-labeled')
      : filterMode === 'no-tools' ? kind !== 'settings' && kind !== 'tool-result'
      : kind !== 'settings';
    if (!ok || !searchWords.length) { return ok; }
    var text = searchTexts.get(id);
    if (text === undefined) {
      var el = entryById.get(id);
      text = ((el ? el.textContent : '') + ' ' + li.textContent).toLowerCase();
      searchTexts.set(id, text);
    }
    return searchWords.every(function (word) { return text.indexOf(word) !== -1; });
  }

  // As pi's page, the connectors are drawn again for what is shown: a shown entry hangs
  // under its nearest shown ancestor, and only forks with more than one shown branch get
  // rails (the same ASCII tree page.py draws, at most MAX_INDENT forks deep); several shown
  // roots stand side by side without connectors, as pi's virtual root.
  var maxIndent = 12;
  function shownParent(id) {
    var el = entryById.get(id);
    var parent = el ? el.getAttribute('data-parent') : '';
    while (parent) {
      var li = treeItems.get(parent);
      if (li && !li.hidden) { return parent; }
      var up = entryById.get(parent);
      parent = up ? up.getAttribute('data-parent') : '';
    }
    return '';
  }
  function railsOf(li) {
    var a = li.querySelector('a');
    var span = a.querySelector('.rails');
    if (!span) {
      span = doc.createElement('span');
      span.className = 'rails';
      a.insertBefore(span, a.firstChild);
    }
    return span;
  }
  function redrawRails() {
    var children = new Map();
    treeItems.forEach(function (li, id) {
      if (li.hidden) { return; }
      var parent = shownParent(id);
      if (!children.has(parent)) { children.set(parent, []); }
      children.get(parent).push(id);
    });
    var stack = [];
    function queue(parent, rails, depth) {
      var kids = children.get(parent) || [];
      if (kids.length === 1 || (parent === '' && kids.length)) {  // several shown roots: no connector (pi)
        for (var k = kids.length - 1; k >= 0; k--) { stack.push([kids[k], rails, rails, depth]); }
        return;
      }
      if (kids.length && depth >= maxIndent) { rails = rails.slice(0, -3); }
      for (var i = kids.length - 1; i >= 0; i--) {
        var last = i === kids.length - 1;
        stack.push([kids[i], rails + (last ? '\u2514\u2500 ' : '\u251c\u2500 '),
                    rails + (last ? '   ' : '\u2502  '), depth + 1]);
      }
    }
    queue('', '', 0);
    while (stack.length) {
      var item = stack.pop();
      var span = railsOf(treeItems.get(item[0]));
      if (span.textContent !== item[1]) { span.textContent = item[1]; }
      queue(item[0], item[2], item[3]);
    }
  }

  function applyFilter() {
    var shown = 0;
    treeItems.forEach(function (li, id) {
      var ok = passes(id, li);
      if (li.hidden === ok) { li.hidden = !ok; }
      if (ok) { shown++; }
    });
    redrawRails();
    if (treeStatus) { treeStatus.textContent = shown + ' / ' + treeItems.size + ' entries'; }
    all('#tree-filters button').forEach(function (b) {
      b.classList.toggle('active', b.getAttribute('data-filter') === filterMode);
    });
  }

  var searchBox = doc.getElementById('tree-search');
  if (searchBox) {
    searchBox.addEventListener('input', function () {
      searchWords = searchBox.value.toLowerCase().split(/\s+/).filter(Boolean);
      applyFilter();
    });
  }
  doc.addEventListener('click', function (event) {
    var button = event.target.closest('#tree-filters button[data-filter]');
    if (button) { filterMode = button.getAttribute('data-filter'); applyFilter(); }
  });

  var params = new URLSearchParams(window.location.search);
  var target = params.get('targetId');
  var start = params.get('leafId');
  if (!entryById.has(start)) {
    start = entryById.has(target) ? newestLeaf(target) : body.getAttribute('data-leaf');
  }
  showAll = params.get('view') === 'all';
  show(start);
  applyFilter();
  doc.getElementById('tree-tools').hidden = false;
  // Shown only now, so that a large page is laid out once, not as it arrives.
  doc.getElementById('toolbar').hidden = false;
  doc.getElementById('sidebar').hidden = false;
  doc.getElementById('entries').hidden = false;
  if (entryById.has(target)) {
    reveal(target);
  } else if (window.location.hash.indexOf('#e-') === 0) {
    reveal(decodeURIComponent(window.location.hash.slice(3)));
  }
})();
