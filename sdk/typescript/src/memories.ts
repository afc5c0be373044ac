// Long-term memory: the caller's values under a namespace and a key, with search, and an
// If-Match read-modify-write of one item.
import { CarryonError } from "./errors.js";
import { Paged, type ListOptions, type Page } from "./paging.js";
import type { CallOptions, Transport, WriteOptions } from "./transport.js";
import type * as T from "./types.js";

const enc = encodeURIComponent;

/** Options of the update helper. */
export interface UpdateOptions extends CallOptions {
  /** How many times fn is applied at most before the last conflict is thrown (default 10). */
  attempts?: number;
}

/** Memories are the caller's long-term memory: values under a namespace and a key, with search. */
export class Memories {
  constructor(private readonly t: Transport) {}

  private path(namespace: string, key: string): string {
    return `/v1/memories/${enc(namespace)}/${enc(key)}`;
  }

  /** put stores value under namespace/key (with text for search, and a TTL in seconds). ifMatch 0 puts only a new item. */
  put(namespace: string, key: string, item: { value: unknown; text?: string; ttl_seconds?: number }, o: WriteOptions = {}): Promise<T.MemoryItem> {
    return this.t.json({ method: "PUT", path: this.path(namespace, key), body: item, write: true, options: o });
  }

  /** get reads an item; undefined when there is none. */
  async get(namespace: string, key: string, o: CallOptions = {}): Promise<T.MemoryItem | undefined> {
    try {
      return await this.t.json<T.MemoryItem>({ method: "GET", path: this.path(namespace, key), options: o });
    } catch (err) {
      if (err instanceof CarryonError && err.code === "not_found") return undefined;
      throw err;
    }
  }

  /**
   * update is a read-modify-write of one item: fn gets its value (undefined when there is none)
   * and returns the new one, which is put with If-Match at the version read ("0" for a new item).
   * When another write got in first it reads again and applies fn again, up to attempts (10) times.
   */
  async update(
    namespace: string,
    key: string,
    fn: (value: unknown, item: T.MemoryItem | undefined) => { value: unknown; text?: string; ttl_seconds?: number } | Promise<{ value: unknown; text?: string; ttl_seconds?: number }>,
    o: UpdateOptions = {},
  ): Promise<T.MemoryItem> {
    const attempts = o.attempts ?? 10;
    for (let i = 1; ; i++) {
      const item = await this.get(namespace, key, o);
      const next = await fn(item === undefined ? undefined : structuredClone(item.value), item);
      try {
        return await this.put(namespace, key, next, { signal: o.signal, ifMatch: item?.version ?? 0 });
      } catch (err) {
        if (!(err instanceof CarryonError && err.code === "version_conflict") || i >= attempts) throw err;
      }
    }
  }

  /** delete forgets an item. */
  async delete(namespace: string, key: string, o: WriteOptions = {}): Promise<void> {
    await this.t.send({ method: "DELETE", path: this.path(namespace, key), write: true, options: o });
  }

  /** list is the caller's items by namespace and key, under namespace when given. */
  list(o: ListOptions & { namespace?: string } = {}): Paged<T.MemoryItem> {
    return new Paged((cursor) => this.t.json<Page<T.MemoryItem>>({ method: "GET", path: "/v1/memories", query: { namespace: o.namespace, limit: o.limit, cursor }, options: o }));
  }

  /** search is the caller's items that match the words of query, most relevant first. */
  search(query: string, o: ListOptions & { namespace?: string } = {}): Paged<T.MemoryItem> {
    return new Paged((cursor) =>
      this.t.json<Page<T.MemoryItem>>({ method: "POST", path: "/v1/memories/search", body: { query, namespace: o.namespace, limit: o.limit, cursor }, options: o, retry: true }),
    );
  }
}
