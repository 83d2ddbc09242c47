// What every list view's load() begins with: "add a server first" when none
// is chosen, "Loading…" while the answer is on its way, the error if it
// fails. Each load has a generation: an answer that arrives after a newer
// load began (another tab, another server) or after the view was left is
// dropped, never shown. The view's container counts the dropped answers in
// data-stale-answers, which is what the tests wait on.
import { api } from './api.js';
import { currentServer } from './state.js';
import { h, errorBox } from './util.js';

export class ViewLoader {
  /** @param {(body: Node) => void} shell shows `body` in the view */
  constructor(shell) {
    this.shell = shell;
    this.generation = 0;
    this.dropped = 0;
    /** @type {HTMLElement|null} */
    this.container = null;
  }

  /** @param {HTMLElement} container the view's, when it is mounted */
  attach(container) {
    this.container = container;
    this.generation += 1;
  }

  /** The view is left: every answer still on its way is dropped. */
  detach() {
    this.container = null;
    this.generation += 1;
  }

  /**
   * GETs `path(server)` for the chosen server.
   * @param {(server: {id: string, name: string}) => string} path
   * @returns {Promise<{server: any, answer: any}|null>} null when there is
   *   no server, the load failed (the error is shown) or the answer is stale
   */
  async load(path) {
    if (!this.container) return null;
    this.generation += 1;
    const mine = this.generation;
    const container = this.container;
    const server = currentServer();
    if (!server) {
      this.shell(h('p', { class: 'empty' }, 'Add a server first (Servers), then come back here.'));
      return null;
    }
    this.shell(h('p', { class: 'muted' }, 'Loading…'));
    let answer;
    try {
      answer = await api('GET', path(server));
    } catch (error) {
      if (mine === this.generation) this.shell(errorBox(error));
      else this.drop(container);
      return null;
    }
    if (mine !== this.generation) {
      this.drop(container);
      return null;
    }
    return { server, answer };
  }

  drop(container) {
    this.dropped += 1;
    container.dataset.staleAnswers = String(this.dropped);
  }
}
