"""Draw assets/favicon.png, the workbench favicon: a small knowledge graph (a hub and five neighbours).

Shipped as a file so the browser never fetches an icon from an outside font host (the app runs offline).
Run: .venv/bin/python scripts/draw_favicon.py
"""
import math
from PIL import Image, ImageDraw

def draw(size: int) -> Image.Image:
    s = 4  # supersample
    n = size * s
    img = Image.new("RGBA", (n, n), (0, 0, 0, 0))
    d = ImageDraw.Draw(img)
    c = n / 2
    r_out = n * 0.36
    pts = [(c + r_out * math.cos(math.radians(-90 + 72 * k)), c + r_out * math.sin(math.radians(-90 + 72 * k))) for k in range(5)]
    line = (232, 89, 12, 255)
    for i, p in enumerate(pts):
        d.line([(c, c), p], fill=line, width=int(n * 0.06))
    d.line([pts[0], pts[1]], fill=line, width=int(n * 0.04))
    for p in pts:
        rr = n * 0.1
        d.ellipse([p[0] - rr, p[1] - rr, p[0] + rr, p[1] + rr], fill=(255, 255, 255, 255), outline=line, width=int(n * 0.045))
    rr = n * 0.15
    d.ellipse([c - rr, c - rr, c + rr, c + rr], fill=line)
    return img.resize((size, size), Image.LANCZOS)

if __name__ == "__main__":
    from pathlib import Path

    draw(64).save(Path(__file__).resolve().parents[1] / "assets" / "favicon.png", optimize=True)
