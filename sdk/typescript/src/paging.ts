// Paging: every carryon listing answers {items, next_cursor}; Paged walks the pages lazily as an
// async iterator of items, asking for the next page only when the items of the last one are used.

import type { CallOptions } from "./transport.js";

/** Options of a listing. */
export interface ListOptions extends CallOptions {
  /** Items per page (1–1000; the server's default 50). */
  limit?: number;
}

/** One page of a listing. */
export interface Page<T> {
  items: T[];
  next_cursor?: string;
}

/**
 * Paged is a listing read page by page: iterate it with for await, or read its pages. P is the
 * type of a page, for listings whose answers say more than their items (a search's mode).
 */
export class Paged<T, P extends Page<T> = Page<T>> implements AsyncIterable<T> {
  private readonly fetchPage: (cursor: string | undefined) => Promise<P>;

  constructor(fetchPage: (cursor: string | undefined) => Promise<P>) {
    this.fetchPage = fetchPage;
  }

  /** page reads one page: the first, or the one after cursor (a page's next_cursor). */
  page(cursor?: string): Promise<P> {
    return this.fetchPage(cursor);
  }

  /** pages yields each page as the server answered it, following next_cursor until the last page. */
  async *pages(): AsyncGenerator<P> {
    let cursor: string | undefined;
    for (;;) {
      const page = await this.fetchPage(cursor);
      yield page;
      if (!page.next_cursor) return;
      cursor = page.next_cursor;
    }
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T> {
    for await (const page of this.pages()) yield* page.items;
  }

  /** toArray reads every item (at most max of them). */
  async toArray(max = Infinity): Promise<T[]> {
    const out: T[] = [];
    for await (const item of this) {
      if (out.length >= max) break;
      out.push(item);
    }
    return out;
  }
}
