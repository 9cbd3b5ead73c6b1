"""A profile a person reads at a glance: one self-contained HTML page (no script, no
network) holding two SVG bar charts — time per node, sorted, and time per op kind."""
from xml.sax.saxutils import escape

BAR_HEIGHT, GAP, LABEL_WIDTH, CHART_WIDTH = 16, 4, 360, 520


def bars(title, rows):
    """An SVG chart of (label, seconds, note) rows, the longest bar the largest value."""
    top = max((seconds for _, seconds, _ in rows), default=0.0) or 1.0
    height = 28 + len(rows) * (BAR_HEIGHT + GAP)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{LABEL_WIDTH + CHART_WIDTH + 160}" '
             f'height="{height}" font-family="sans-serif" font-size="12">',
             f'<text x="0" y="16" font-weight="bold">{escape(title)}</text>']
    for index, (label, seconds, note) in enumerate(rows):
        y = 28 + index * (BAR_HEIGHT + GAP)
        width = max(1.0, CHART_WIDTH * seconds / top)
        parts += [f'<text x="{LABEL_WIDTH - 6}" y="{y + 12}" text-anchor="end">'
                  f'{escape(label)}</text>',
                  f'<rect x="{LABEL_WIDTH}" y="{y}" width="{width:.1f}" height="{BAR_HEIGHT}" '
                  f'fill="#d9622b"><title>{escape(label)}: {seconds * 1e6:.1f} us</title></rect>',
                  f'<text x="{LABEL_WIDTH + width + 6:.1f}" y="{y + 12}">'
                  f'{seconds * 1e6:.1f} us {escape(note)}</text>']
    parts.append('</svg>')
    return "\n".join(parts)


def html(model_name, nodes):
    """The page for a profile (runnable.profile's list)."""
    total = sum(n["seconds"] for n in nodes) or 1.0
    by_time = sorted(nodes, key=lambda n: -n["seconds"])
    node_rows = [(f'{n["name"]} ({", ".join(filter(None, (n["op"], n["form"])))})',
                  n["seconds"], f'{100 * n["seconds"] / total:.1f}%') for n in by_time]
    kinds = {}
    for n in nodes:
        count, seconds = kinds.get(n["op"], (0, 0.0))
        kinds[n["op"]] = (count + 1, seconds + n["seconds"])
    kind_rows = [(f"{op} ×{count}", seconds, f"{100 * seconds / total:.1f}%")
                 for op, (count, seconds) in sorted(kinds.items(), key=lambda kv: -kv[1][1])]
    return (f'<!DOCTYPE html>\n<html><head><meta charset="utf-8">'
            f'<title>ember profile: {escape(model_name)}</title></head><body>\n'
            f'<h1>{escape(model_name)}</h1><p>{total * 1e3:.3f} ms per run in '
            f'{len(nodes)} nodes, one thread</p>\n'
            f'{bars("time per op kind", kind_rows)}\n{bars("time per node", node_rows)}\n'
            f'</body></html>\n')
