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
    var key = { b: 'branches', t: 'thinking', o: 'output' }[(event.key || '').toLowerCase()];
    if (key) { actions[key](); }
  });

  var params = new URLSearchParams(window.location.search);
  var target = params.get('targetId');
  var start = params.get('leafId');
  if (!entryById.has(start)) {
    start = entryById.has(target) ? newestLeaf(target) : body.getAttribute('data-leaf');
  }
  showAll = params.get('view') === 'all';
  show(start);
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
