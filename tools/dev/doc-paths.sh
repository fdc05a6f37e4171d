#!/usr/bin/env bash
# Checks that every repository path the documents cite exists: `src/…`, `test/…`, `tools/…`, `deploy/…`,
# `scripts/…` and `docs/…` in README.md and docs/*.md, and every relative Markdown link (and its #anchor). A path with `*`
# must match a file; one with a placeholder (`<family>`) is skipped. Prints what is missing; exit 1 if any.
# Usage: tools/dev/doc-paths.sh [FILE.md …]
set -uo pipefail
cd "$(dirname "$0")/../.."
files=("$@")
[ ${#files[@]} -eq 0 ] && files=(README.md docs/*.md)
missing=0
for f in "${files[@]}"; do
  dir=$(dirname "$f")
  # Cited paths, anywhere in the text.
  while IFS= read -r p; do
    p=${p%.}
    case "$p" in *'<'*|*'{'*) continue ;; esac
    if [[ "$p" == *'*'* ]]; then compgen -G "$p" >/dev/null && continue
    elif [ -e "$p" ]; then continue
    fi
    echo "$f: $p"; missing=1
  done < <(grep -oE '(^|[^A-Za-z0-9_./-])(src|test|tools|deploy|scripts|docs)/[A-Za-z0-9_.*<>{}/-]*' "$f" | sed -E 's/^[^a-z]//' | sort -u)
  # Relative Markdown links: [text](target), anchors dropped.
  while IFS= read -r link; do
    target=${link%%#*}
    [ -z "$target" ] && continue
    case "$target" in http:*|https:*|mailto:*) continue ;; esac
    if [ ! -e "$dir/$target" ]; then echo "$f: link $link"; missing=1; continue; fi
    # An anchor must be a heading of the target, as GitHub makes its slug.
    [[ "$link" == *'#'* ]] || continue
    anchor=${link#*#}
    grep -E '^#+ ' "$dir/$target" | sed -E 's/^#+ //' | tr '[:upper:]' '[:lower:]' | sed -E 's/[^a-z0-9 _-]//g; s/ /-/g' |
      grep -qxF -- "$anchor" || { echo "$f: anchor $link"; missing=1; }
  done < <(grep -oE '\]\([^)]+\)' "$f" | sed -E 's/^\]\(//; s/\)$//' | sort -u)
done
exit $missing
