#!/usr/bin/env python3
"""The layering rules of dm-bcache's sources, checked (part of make lint).

  check-layers.py [TOP]      check the tree at TOP (default: this checkout)
  check-layers.py --self-test
                             plant each kind of violation in a scratch copy
                             and require the check to report it

The rules:
- core/ is one folder per layer, in the order DMB_CORE_LAYERS of
  dm-bcache/core/sources.mk gives (peers joined by a comma).  A core file
  includes core headers as "LAYER/name.h", only from its own layer or
  one listed before it, never from a peer.
- core/ includes nothing of the target glue (dm-bcache/*.h) and nothing
  of userspace.
- Every .c file in core/ is in DMB_CORE_SRCS (or, userspace's platform
  state only, DMB_CORE_USER_SRCS; the offline tools' repair layer only,
  DMB_CORE_TOOL_SRCS) and every listed file exists: the module and the
  userspace library build the same core.
- The userspace tools and their library include no glue header.

Prints one line per violation; exits 1 if there is any.
"""
import os
import re
import shutil
import sys
import tempfile

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def make_var(text, name):
    """The value of NAME := ... in a makefile, continuation lines joined."""
    m = re.search(r'^%s\s*:=\s*((?:.*\\\n)*.*)$' % name, text, re.M)
    if not m:
        raise SystemExit('check-layers: %s not found in sources.mk' % name)
    return m.group(1).replace('\\\n', ' ').split()


def check(top):
    core = os.path.join(top, 'dm-bcache', 'core')
    mk = open(os.path.join(core, 'sources.mk')).read()
    rank = {}
    for i, group in enumerate(make_var(mk, 'DMB_CORE_LAYERS')):
        for layer in group.split(','):
            rank[layer] = i
    srcs = set(make_var(mk, 'DMB_CORE_SRCS')) | \
        set(make_var(mk, 'DMB_CORE_USER_SRCS')) | \
        set(make_var(mk, 'DMB_CORE_TOOL_SRCS'))
    bad = []

    found = set()
    for layer in sorted(os.listdir(core)):
        path = os.path.join(core, layer)
        if not os.path.isdir(path):
            if layer.endswith(('.c', '.h')):
                bad.append('core/%s: outside any layer folder' % layer)
            continue
        if layer not in rank:
            bad.append('core/%s/: not a layer of DMB_CORE_LAYERS' % layer)
            continue
        for name in sorted(os.listdir(path)):
            if not name.endswith(('.c', '.h')):
                continue
            rel = '%s/%s' % (layer, name)
            if name.endswith('.c'):
                found.add(rel)
            text = open(os.path.join(path, name)).read()
            for inc in INCLUDE.findall(text):
                parts = inc.split('/')
                if len(parts) != 2 or parts[0] not in rank:
                    bad.append('core/%s: includes "%s", not a core '
                               'header by its layer' % (rel, inc))
                    continue
                if not os.path.exists(os.path.join(core, inc)):
                    bad.append('core/%s: includes "%s", which does not '
                               'exist' % (rel, inc))
                elif parts[0] != layer and rank[parts[0]] >= rank[layer]:
                    how = 'a peer' if rank[parts[0]] == rank[layer] \
                        else 'a layer above it'
                    bad.append('core/%s: includes "%s" from %s (%s)'
                               % (rel, inc, how, parts[0]))
    for rel in sorted(found - srcs):
        bad.append('core/%s: not in DMB_CORE_SRCS' % rel)
    for rel in sorted(srcs - found):
        bad.append('core/%s: in DMB_CORE_SRCS but absent' % rel)

    glue = {n for n in os.listdir(os.path.join(top, 'dm-bcache'))
            if n.endswith('.h')}
    for base, _, names in os.walk(os.path.join(top, 'userspace')):
        for name in sorted(names):
            if not name.endswith(('.c', '.h')):
                continue
            path = os.path.join(base, name)
            for inc in INCLUDE.findall(open(path).read()):
                if os.path.basename(inc) in glue or inc.startswith('core/'):
                    bad.append('%s: includes the target glue\'s "%s"'
                               % (os.path.relpath(path, top), inc))
    return bad


def self_test(top):
    """Each planted violation must be reported; the clean copy must pass."""
    plants = [
        ('format/bkey.c', '#include "set/set.h"\n', 'a layer above it'),
        ('set/set.c', '#include "check/check.h"\n', 'a peer'),
        ('btree/btree.c', '#include "dmb-target.h"\n', 'not a core header'),
        ('util/array.c', '#include "array.h"\n', 'not a core header'),
        ('btree/stray.c', '/* not listed */\n', 'not in DMB_CORE_SRCS'),
    ]
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for rel, line, want in [(None, None, None)] + plants:
            copy = os.path.join(tmp, 'copy')
            shutil.rmtree(copy, ignore_errors=True)
            os.makedirs(copy)
            shutil.copytree(os.path.join(top, 'dm-bcache'),
                            os.path.join(copy, 'dm-bcache'))
            shutil.copytree(os.path.join(top, 'userspace'),
                            os.path.join(copy, 'userspace'))
            if rel:
                path = os.path.join(copy, 'dm-bcache', 'core', rel)
                old = open(path).read() if os.path.exists(path) else ''
                open(path, 'w').write(line + old)
            bad = check(copy)
            if rel is None:
                ok = not bad
                what = 'the unchanged tree passes'
            else:
                ok = any(want in b for b in bad)
                what = '%s planted in %s is reported' % (line.strip(), rel)
            print('%s layers/self-test: %s' % ('PASS' if ok else 'FAIL', what))
            failures += not ok
    return failures


def main():
    args = sys.argv[1:]
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if args == ['--self-test']:
        sys.exit(1 if self_test(here) else 0)
    top = args[0] if args else here
    bad = check(top)
    for b in bad:
        print('layers: ' + b)
    sys.exit(1 if bad else 0)


if __name__ == '__main__':
    main()
