#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Style gate: every C file is as clang-format (.clang-format) writes it, and
# every text file follows .editorconfig's basics (no trailing whitespace
# outside Markdown, a final newline, no CR).
set -uo pipefail
top=${1:?usage: check.sh <source-root>}
cd "$top"
cf=$(command -v clang-format-14 || command -v clang-format || true)
if [ -z "$cf" ]; then
    echo "SKIP: clang-format not installed"
    exit 77
fi
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    mapfile -t files < <(git ls-files --cached --others --exclude-standard)
else
    mapfile -t files < <(find . \( -path ./build\* -o -path ./.git \) -prune -o -type f -print | sed 's|^\./||')
fi
fail=0
n=0
for f in "${files[@]}"; do
    [ -f "$f" ] || continue
    case "$f" in
    *.c|*.h)
        n=$((n + 1))
        if ! "$cf" --style=file --dry-run --Werror "$f" >/dev/null 2>&1; then
            echo "FAIL: $f is not clang-formatted (run: $cf -i $f)"
            fail=1
        fi
        ;;
    esac
    case "$f" in
    *.pcap|*.bin|tests/fuzz/corpus/*) continue ;;
    esac
    if grep -q $'\r' "$f"; then
        echo "FAIL: $f has CR line endings"; fail=1
    fi
    if [ -s "$f" ] && [ "$(tail -c1 "$f" | od -An -c | tr -d ' ')" != '\n' ]; then
        echo "FAIL: $f has no final newline"; fail=1
    fi
    case "$f" in
    # a unified diff's context line of an empty line is one space
    *.md|*.patch) ;;
    *) if grep -nE '[[:space:]]+$' "$f" >/dev/null; then
           echo "FAIL: $f has trailing whitespace:"; grep -nE '[[:space:]]+$' "$f" | head -3; fail=1
       fi ;;
    esac
done
echo "style: $n C files and ${#files[@]} files checked"
exit $fail
