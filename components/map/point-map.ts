/**
 * The map's points drawn with WebGL, and the hand on them: drag to pan, the wheel to zoom about the cursor, a lasso
 * in lasso mode or with shift held, the point under the cursor found through a grid over the points. Our own small
 * renderer: the libraries that do this compile their shaders' glue with `new Function`, which the console's content
 * security policy (no 'unsafe-eval') rightly refuses.
 */

export interface PointMapEvents {
  hover: (index: number | null) => void;
  /** The points a lasso caught or a click picked; null when a click hit no point. */
  select: (indices: number[] | null) => void;
}

const VERTEX = `
attribute vec2 a_pos;
attribute vec4 a_color;
uniform vec2 u_scale;
uniform vec2 u_offset;
uniform mediump float u_size;
varying vec4 v_color;
void main() {
  gl_Position = vec4(a_pos * u_scale + u_offset, 0.0, 1.0);
  gl_PointSize = u_size;
  v_color = a_color;
}`;

// A round point whose rim fades over about a pixel: smooth without the canvas's multisampling, which made a software
// renderer's first frame of the map block the page for 0.2 s more (0.04-0.06 s without).
const FRAGMENT = `
precision mediump float;
varying vec4 v_color;
uniform float u_size;
void main() {
  float r = length(gl_PointCoord - vec2(0.5)) * u_size;
  float edge = clamp(u_size * 0.5 - r + 0.5, 0.0, 1.0);
  if (edge <= 0.0) discard;
  float a = v_color.a * edge;
  gl_FragColor = vec4(v_color.rgb * a, a);
}`;

/** Cells per side of the grid that finds the point under the cursor. */
const GRID = 128;
const FADED_ALPHA = 0.12;
const DRAG_PIXELS = 4;

const pointSizeFor = (n: number) => (n > 50_000 ? 2.5 : n > 5_000 ? 3.5 : n > 500 ? 6 : 9);

function rgb(hex: string): [number, number, number] {
  const v = parseInt(hex.slice(1), 16);
  return [(v >> 16) & 255, (v >> 8) & 255, v & 255];
}

function compile(gl: WebGLRenderingContext): WebGLProgram {
  const program = gl.createProgram();
  for (const [type, source] of [
    [gl.VERTEX_SHADER, VERTEX],
    [gl.FRAGMENT_SHADER, FRAGMENT],
  ] as const) {
    const shader = gl.createShader(type)!;
    gl.shaderSource(shader, source);
    gl.compileShader(shader);
    gl.attachShader(program, shader);
  }
  gl.linkProgram(program);
  if (!gl.getProgramParameter(program, gl.LINK_STATUS)) throw new Error(`the map's shaders did not link: ${gl.getProgramInfoLog(program)}`);
  return program;
}

/** A canvas with its WebGL context, its linked shaders and its buffers. */
interface Surface {
  canvas: HTMLCanvasElement;
  gl: WebGLRenderingContext;
  program: WebGLProgram;
  positions: WebGLBuffer;
  colorBuffer: WebGLBuffer;
}

function makeSurface(): Surface {
  const canvas = document.createElement("canvas");
  canvas.setAttribute("aria-label", "Map of the table's rows");
  canvas.className = "absolute inset-0 h-full w-full cursor-grab";
  const gl = canvas.getContext("webgl", { antialias: false, premultipliedAlpha: true, alpha: true });
  if (!gl) throw new Error("this browser cannot draw WebGL");
  const program = compile(gl);
  const surface = { canvas, gl, program, positions: gl.createBuffer(), colorBuffer: gl.createBuffer() };
  // One unseen point drawn: a software renderer compiles its drawing routines at the first draw.
  gl.bindBuffer(gl.ARRAY_BUFFER, surface.positions);
  gl.bufferData(gl.ARRAY_BUFFER, new Float32Array(2), gl.STATIC_DRAW);
  gl.bindBuffer(gl.ARRAY_BUFFER, surface.colorBuffer);
  gl.bufferData(gl.ARRAY_BUFFER, new Uint8Array(4), gl.STATIC_DRAW);
  drawPoints(surface, 1, { scale: [1, 1], offset: [0, 0], size: 1 });
  return surface;
}

function drawPoints({ gl, program, positions, colorBuffer }: Surface, count: number, view: { scale: number[]; offset: number[]; size: number }) {
  gl.clearColor(0, 0, 0, 0);
  gl.clear(gl.COLOR_BUFFER_BIT);
  gl.enable(gl.BLEND);
  gl.blendFunc(gl.ONE, gl.ONE_MINUS_SRC_ALPHA);
  gl.useProgram(program);
  gl.uniform2f(gl.getUniformLocation(program, "u_scale"), view.scale[0], view.scale[1]);
  gl.uniform2f(gl.getUniformLocation(program, "u_offset"), view.offset[0], view.offset[1]);
  gl.uniform1f(gl.getUniformLocation(program, "u_size"), view.size);
  const pos = gl.getAttribLocation(program, "a_pos");
  gl.bindBuffer(gl.ARRAY_BUFFER, positions);
  gl.enableVertexAttribArray(pos);
  gl.vertexAttribPointer(pos, 2, gl.FLOAT, false, 0, 0);
  const color = gl.getAttribLocation(program, "a_color");
  gl.bindBuffer(gl.ARRAY_BUFFER, colorBuffer);
  gl.enableVertexAttribArray(color);
  gl.vertexAttribPointer(color, 4, gl.UNSIGNED_BYTE, true, 0, 0);
  gl.drawArrays(gl.POINTS, 0, count);
}

/**
 * The surface the next map draws on. Making one (a WebGL context, its shaders linked) blocks the page for a quarter of
 * a second on a software renderer, so it is made while the map is on its way, and a map hands its surface on when it
 * goes (a preview giving way to every row) rather than each making its own.
 */
let spare: Surface | null = null;

/** Makes the next map's surface now, ahead of its points; throws when the browser cannot draw WebGL. */
export function prepareSurface(): void {
  spare ??= makeSurface();
}

function insidePolygon(px: number, py: number, polygon: number[]): boolean {
  let inside = false;
  for (let i = 0, j = polygon.length - 2; i < polygon.length; j = i, i += 2) {
    const xi = polygon[i];
    const yi = polygon[i + 1];
    const xj = polygon[j];
    const yj = polygon[j + 1];
    if (yi > py !== yj > py && px < ((xj - xi) * (py - yi)) / (yj - yi) + xi) inside = !inside;
  }
  return inside;
}

export class PointMap {
  private readonly surface: Surface;
  private readonly canvas: HTMLCanvasElement;
  private readonly gl: WebGLRenderingContext;
  private x: Float32Array = new Float32Array(0);
  private y: Float32Array = new Float32Array(0);
  private category: Float32Array = new Float32Array(0);
  private palette: Array<[number, number, number]> = [];
  private selected: Set<number> | null = null;
  private trails: { index: Int32Array; x: Float32Array; y: Float32Array } | null = null;
  private cells: Int32Array[] = [];
  private view = { zoom: 1, cx: 0, cy: 0 };
  private frame = 0;
  private hovered: number | null = null;
  private lasso = false;
  private gesture: { kind: "pan" | "lasso"; startX: number; startY: number; moved: boolean; path: number[]; view: { cx: number; cy: number } } | null = null;
  private readonly listeners: Array<() => void> = [];

  /** Draws into the container, beneath `overlay`, on the spare surface or a new one. */
  constructor(
    container: HTMLElement,
    private readonly overlay: HTMLCanvasElement,
    private readonly events: PointMapEvents,
  ) {
    this.surface = spare ?? makeSurface();
    spare = null;
    this.canvas = this.surface.canvas;
    this.gl = this.surface.gl;
    container.insertBefore(this.canvas, overlay);
    const canvas = this.canvas;
    const on = <K extends keyof HTMLElementEventMap>(
      target: HTMLElement | Window,
      type: K,
      fn: (e: HTMLElementEventMap[K]) => void,
      options?: AddEventListenerOptions,
    ) => {
      target.addEventListener(type, fn as EventListener, options);
      this.listeners.push(() => target.removeEventListener(type, fn as EventListener));
    };
    on(canvas, "wheel", (e) => this.wheel(e), { passive: false });
    on(canvas, "pointerdown", (e) => this.down(e));
    on(window, "pointermove", (e) => this.move(e));
    on(window, "pointerup", (e) => this.up(e));
    on(canvas, "pointerleave", () => this.setHovered(null));
  }

  /** Lets the surface go to the next map (the page keeps one spare). */
  destroy() {
    for (const off of this.listeners) off();
    cancelAnimationFrame(this.frame);
    this.canvas.remove();
    spare ??= this.surface;
  }

  setPoints(x: Float32Array, y: Float32Array, category: Float32Array, colors: string[]) {
    this.x = x;
    this.y = y;
    this.category = category;
    this.palette = colors.map(rgb);
    const interleaved = new Float32Array(x.length * 2);
    for (let i = 0; i < x.length; i++) {
      interleaved[2 * i] = x[i];
      interleaved[2 * i + 1] = y[i];
    }
    const gl = this.gl;
    gl.bindBuffer(gl.ARRAY_BUFFER, this.surface.positions);
    gl.bufferData(gl.ARRAY_BUFFER, interleaved, gl.STATIC_DRAW);
    this.index();
    this.recolor();
  }

  /** Lines from where some points were (x, y) to where they are: rows that moved between two versions. */
  setTrails(trails: { index: Int32Array; x: Float32Array; y: Float32Array } | null) {
    this.trails = trails && trails.index.length ? trails : null;
    this.redraw();
  }

  /** Whether a drag draws a lasso (else it pans; with shift held it always lassos). */
  setLasso(on: boolean) {
    this.lasso = on;
    this.canvas.classList.toggle("cursor-crosshair", on);
    this.canvas.classList.toggle("cursor-grab", !on);
  }

  setSelected(indices: number[] | null) {
    this.selected = indices && indices.length ? new Set(indices) : null;
    this.recolor();
  }

  private index() {
    const buckets: number[][] = Array.from({ length: GRID * GRID }, () => []);
    for (let i = 0; i < this.x.length; i++) buckets[this.cellOf(this.x[i], this.y[i])].push(i);
    this.cells = buckets.map((b) => Int32Array.from(b));
  }

  private cellOf(x: number, y: number) {
    const cx = Math.min(GRID - 1, Math.max(0, Math.floor(((x + 1) / 2) * GRID)));
    const cy = Math.min(GRID - 1, Math.max(0, Math.floor(((y + 1) / 2) * GRID)));
    return cy * GRID + cx;
  }

  private recolor() {
    const n = this.x.length;
    const colors = new Uint8Array(n * 4);
    for (let i = 0; i < n; i++) {
      const [r, g, b] = this.palette[this.category[i]] ?? [128, 128, 128];
      colors.set([r, g, b, this.selected && !this.selected.has(i) ? Math.round(FADED_ALPHA * 255) : 235], i * 4);
    }
    const gl = this.gl;
    gl.bindBuffer(gl.ARRAY_BUFFER, this.surface.colorBuffer);
    gl.bufferData(gl.ARRAY_BUFFER, colors, gl.STATIC_DRAW);
    this.redraw();
  }

  /** Data units to clip space: the square [-1, 1]² fits the canvas's shorter side at zoom 1. */
  private scale() {
    const { width, height } = this.canvas;
    const side = Math.min(width, height);
    return { sx: (this.view.zoom * side) / width, sy: (this.view.zoom * side) / height };
  }

  /** A point of the page (CSS pixels) in data units. */
  private toData(clientX: number, clientY: number) {
    const box = this.canvas.getBoundingClientRect();
    const { sx, sy } = this.scale();
    const clipX = ((clientX - box.left) / box.width) * 2 - 1;
    const clipY = 1 - ((clientY - box.top) / box.height) * 2;
    return { x: (clipX + this.view.cx * sx) / sx, y: (clipY + this.view.cy * sy) / sy };
  }

  /** Data units per CSS pixel. */
  private dataPerPixel() {
    const box = this.canvas.getBoundingClientRect();
    return 2 / (this.scale().sx * box.width);
  }

  redraw() {
    cancelAnimationFrame(this.frame);
    this.frame = requestAnimationFrame(() => this.draw());
  }

  private draw() {
    const dpr = window.devicePixelRatio || 1;
    const box = this.canvas.getBoundingClientRect();
    const width = Math.max(1, Math.round(box.width * dpr));
    const height = Math.max(1, Math.round(box.height * dpr));
    if (this.canvas.width !== width || this.canvas.height !== height) {
      this.canvas.width = width;
      this.canvas.height = height;
      this.overlay.width = width;
      this.overlay.height = height;
    }
    this.gl.viewport(0, 0, width, height);
    const { sx, sy } = this.scale();
    drawPoints(this.surface, this.x.length, {
      scale: [sx, sy],
      offset: [-this.view.cx * sx, -this.view.cy * sy],
      size: pointSizeFor(this.x.length) * dpr * Math.min(4, Math.sqrt(this.view.zoom)),
    });
    this.drawOverlay();
  }

  /** The moved points' trails, the lasso's stroke, and a ring round the hovered point. */
  private drawOverlay() {
    const context = this.overlay.getContext("2d")!;
    const dpr = window.devicePixelRatio || 1;
    context.clearRect(0, 0, this.overlay.width, this.overlay.height);
    const box = this.canvas.getBoundingClientRect();
    if (this.trails) {
      const place = this.screenPlace();
      const { sx, sy } = this.scale();
      const { cx, cy } = this.view;
      context.strokeStyle = "rgba(217, 119, 6, 0.55)";
      context.lineWidth = dpr;
      context.beginPath();
      const { index, x, y } = this.trails;
      for (let t = 0; t < index.length; t++) {
        if (this.selected && !this.selected.has(index[t])) continue;
        const to = place(index[t]);
        context.moveTo((((x[t] - cx) * sx + 1) / 2) * box.width * dpr, ((1 - (y[t] - cy) * sy) / 2) * box.height * dpr);
        context.lineTo(to.x * dpr, to.y * dpr);
      }
      context.stroke();
    }
    if (this.gesture?.kind === "lasso" && this.gesture.path.length > 2) {
      context.strokeStyle = "#6366f1";
      context.lineWidth = 1.5 * dpr;
      context.beginPath();
      const p = this.gesture.path;
      context.moveTo((p[0] - box.left) * dpr, (p[1] - box.top) * dpr);
      for (let i = 2; i < p.length; i += 2) context.lineTo((p[i] - box.left) * dpr, (p[i + 1] - box.top) * dpr);
      context.closePath();
      context.stroke();
    }
    if (this.hovered !== null) {
      const at = this.screenPlace()(this.hovered);
      context.strokeStyle = "#6366f1";
      context.lineWidth = 2 * dpr;
      context.beginPath();
      context.arc(at.x * dpr, at.y * dpr, (pointSizeFor(this.x.length) / 2 + 4) * dpr, 0, Math.PI * 2);
      context.stroke();
    }
  }

  /** Where points are on the canvas, in CSS pixels from its corner. */
  private screenPlace() {
    const box = this.canvas.getBoundingClientRect();
    const { sx, sy } = this.scale();
    const { cx, cy } = this.view;
    return (i: number) => ({ x: (((this.x[i] - cx) * sx + 1) / 2) * box.width, y: ((1 - (this.y[i] - cy) * sy) / 2) * box.height });
  }

  /** The point nearest the cursor within a few pixels of it, through the grid's cells round it. */
  private pointAt(clientX: number, clientY: number): number | null {
    const at = this.toData(clientX, clientY);
    const radius = (pointSizeFor(this.x.length) / 2 + 3) * this.dataPerPixel();
    const cell = 2 / GRID;
    const x0 = Math.max(0, Math.floor((at.x - radius + 1) / cell));
    const x1 = Math.min(GRID - 1, Math.floor((at.x + radius + 1) / cell));
    const y0 = Math.max(0, Math.floor((at.y - radius + 1) / cell));
    const y1 = Math.min(GRID - 1, Math.floor((at.y + radius + 1) / cell));
    let best: number | null = null;
    let bestDistance = radius * radius;
    for (let cy = y0; cy <= y1; cy++)
      for (let cx = x0; cx <= x1; cx++)
        for (const i of this.cells[cy * GRID + cx] ?? []) {
          const d = (this.x[i] - at.x) ** 2 + (this.y[i] - at.y) ** 2;
          if (d <= bestDistance) {
            bestDistance = d;
            best = i;
          }
        }
    return best;
  }

  private setHovered(index: number | null) {
    if (index === this.hovered) return;
    this.hovered = index;
    this.events.hover(index);
    this.drawOverlay();
  }

  private wheel(e: WheelEvent) {
    e.preventDefault();
    const before = this.toData(e.clientX, e.clientY);
    this.view.zoom = Math.min(200, Math.max(0.5, this.view.zoom * Math.exp(-e.deltaY * 0.0015)));
    const after = this.toData(e.clientX, e.clientY);
    this.view.cx += before.x - after.x;
    this.view.cy += before.y - after.y;
    this.redraw();
  }

  private down(e: PointerEvent) {
    if (e.button !== 0) return;
    this.gesture = {
      kind: this.lasso || e.shiftKey ? "lasso" : "pan",
      startX: e.clientX,
      startY: e.clientY,
      moved: false,
      path: [e.clientX, e.clientY],
      view: { cx: this.view.cx, cy: this.view.cy },
    };
  }

  private move(e: PointerEvent) {
    const g = this.gesture;
    if (!g) {
      const box = this.canvas.getBoundingClientRect();
      const over = e.clientX >= box.left && e.clientX <= box.right && e.clientY >= box.top && e.clientY <= box.bottom;
      this.setHovered(over ? this.pointAt(e.clientX, e.clientY) : null);
      return;
    }
    if (Math.abs(e.clientX - g.startX) + Math.abs(e.clientY - g.startY) > DRAG_PIXELS) g.moved = true;
    if (g.kind === "lasso") {
      g.path.push(e.clientX, e.clientY);
      this.drawOverlay();
      return;
    }
    const per = this.dataPerPixel();
    this.view.cx = g.view.cx - (e.clientX - g.startX) * per;
    this.view.cy = g.view.cy + (e.clientY - g.startY) * per;
    this.redraw();
  }

  private up(e: PointerEvent) {
    const g = this.gesture;
    this.gesture = null;
    if (!g) return;
    if (!g.moved) {
      const hit = this.pointAt(e.clientX, e.clientY);
      this.events.select(hit === null ? null : [hit]);
      return;
    }
    if (g.kind !== "lasso") return;
    this.drawOverlay();
    const box = this.canvas.getBoundingClientRect();
    const polygon = g.path.map((v, i) => (i % 2 === 0 ? v - box.left : v - box.top));
    let [minX, minY, maxX, maxY] = [Infinity, Infinity, -Infinity, -Infinity];
    for (let i = 0; i < polygon.length; i += 2) {
      minX = Math.min(minX, polygon[i]);
      maxX = Math.max(maxX, polygon[i]);
      minY = Math.min(minY, polygon[i + 1]);
      maxY = Math.max(maxY, polygon[i + 1]);
    }
    const caught: number[] = [];
    const place = this.screenPlace();
    for (let i = 0; i < this.x.length; i++) {
      const at = place(i);
      if (at.x < minX || at.x > maxX || at.y < minY || at.y > maxY) continue;
      if (insidePolygon(at.x, at.y, polygon)) caught.push(i);
    }
    this.events.select(caught.length ? caught : null);
  }
}
