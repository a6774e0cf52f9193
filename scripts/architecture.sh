#!/usr/bin/env bash
# Draws docs/img/architecture.svg from docs/img/architecture.dot (the
# picture in docs/architecture.md). Needs Graphviz: apt-get install graphviz.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v dot >/dev/null || { echo "needs Graphviz's dot (apt-get install graphviz)" >&2; exit 2; }
dot -Tsvg docs/img/architecture.dot -o docs/img/architecture.svg
dot -Tpng -Gdpi=110 docs/img/architecture.dot -o /tmp/lull-architecture.png
echo "docs/img/architecture.svg written (a PNG to look at: /tmp/lull-architecture.png)"
