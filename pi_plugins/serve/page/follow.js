/* Following the conversation: the list stays at its end while the reader is there (also
 * while a prompt and its streaming answer are appended), lets them read up without
 * jumping back, and offers "jump to latest" while they are elsewhere.
 *
 * Whether the reader is "at the end" is decided by what they do (scrolling up, the wheel,
 * a touch, a key), never by measuring after the list has grown: the list grows first and
 * is measured later, which is how the old page lost the bottom. */

const NEAR = 48; // px from the end that still count as "at the end"
const UP_KEYS = new Set(["ArrowUp", "PageUp", "Home"]);

export class Follower {
  constructor(list, jump) {
    this.list = list;
    this.jump = jump;
    this.stuck = true;
    this.lastTop = 0;
    list.addEventListener("scroll", () => this.onScroll(), { passive: true });
    list.addEventListener("wheel", (event) => { if (event.deltaY < 0) this.release(); }, { passive: true });
    list.addEventListener("touchmove", () => { if (this.distance() > NEAR) this.release(); }, { passive: true });
    list.addEventListener("keydown", (event) => { if (UP_KEYS.has(event.key)) this.release(); });
    new MutationObserver(() => this.changed()).observe(list, {
      childList: true, subtree: true, characterData: true, attributes: true, attributeFilter: ["open"],
    });
    new ResizeObserver(() => this.changed()).observe(list);
    jump.addEventListener("click", () => this.toEnd());
  }

  distance() { return this.list.scrollHeight - this.list.scrollTop - this.list.clientHeight; }

  /** Follow from now on and go to the end (a session opened, a prompt sent, the button). */
  toEnd() {
    this.stuck = true;
    this.pin();
  }

  release() {
    this.stuck = false;
    this.showJump();
  }

  onScroll() {
    const top = this.list.scrollTop;
    if (this.distance() <= NEAR) this.stuck = true;
    else if (top < this.lastTop - 1) this.stuck = false; // the reader went up
    this.lastTop = top;
    this.showJump();
  }

  changed() {
    if (this.stuck) this.pin();
    else this.showJump();
  }

  pin() {
    this.list.scrollTop = this.list.scrollHeight;
    this.lastTop = this.list.scrollTop;
    this.showJump();
  }

  showJump() { this.jump.hidden = this.stuck || this.distance() <= NEAR; }
}
