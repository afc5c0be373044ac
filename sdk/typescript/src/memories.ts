// Long-term memory: the caller's values under a namespace and a key, with search (keyword,
// semantic or hybrid), facts added under keys the server chooses and consolidated with their near
// duplicates, the earlier values those adds replaced, and an If-Match read-modify-write of one item.
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

/** How a search ranks: hybrid (the default) fuses the keyword and the semantic ranking. */
export type SearchMode = "hybrid" | "semantic" | "keyword";

/** Options of a search. */
export interface SearchOptions extends ListOptions {
  /** Only this namespace and the namespaces under it. */
  namespace?: string;
  /** How to rank (default hybrid; a server without embeddings answers keyword for it, and 400 for semantic). */
  mode?: SearchMode;
  /** Leaves out results whose score is lower (-1 to 1). */
  minScore?: number;
  /** Keeps the items whose value is an object with each of these top-level fields at exactly this JSON value. */
  filter?: Record<string, unknown>;
}

/** Options of an add. */
export interface AddOptions extends CallOptions {
  /** The item's value (default the text, as a JSON string). */
  value?: unknown;
  /** Makes the item expire this many seconds after the write. */
  ttlSeconds?: number;
  /** The Idempotency-Key of this add; default a new one. */
  requestId?: string;
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

  /**
   * search is the caller's items most relevant to query, best first, each with its score (and, in
   * hybrid mode, the scores of each ranking); its pages say in which mode they were ranked.
   */
  search(query: string, o: SearchOptions = {}): Paged<T.MemoryItem, T.MemoryResults> {
    const body = { query, namespace: o.namespace, mode: o.mode, min_score: o.minScore, filter: o.filter, limit: o.limit };
    return new Paged((cursor) =>
      this.t.json<T.MemoryResults>({ method: "POST", path: "/v1/memories/search", body: { ...body, cursor }, options: o, retry: true }),
    );
  }

  /**
   * add remembers a fact under a key the server chooses; when the namespace holds a near duplicate
   * of it, the add updates that item instead (consolidated_into, similarity), keeping the value it
   * replaced as an earlier version (supersedes). The namespace "search" is not reached this way
   * (its path is the search's): put to it with a key.
   */
  async add(namespace: string, text: string, o: AddOptions = {}): Promise<T.MemoryAdded> {
    if (namespace === "search") throw new TypeError('carryon: add cannot write to the namespace "search" (POST /v1/memories/search is the search); put to it with a key');
    const body = { text, value: o.value, ttl_seconds: o.ttlSeconds };
    return this.t.json({ method: "POST", path: `/v1/memories/${enc(namespace)}`, body, write: true, options: o });
  }

  /** versions is the earlier values of an item that consolidating adds replaced, newest first. */
  async versions(namespace: string, key: string, o: CallOptions = {}): Promise<T.MemoryVersion[]> {
    const out = await this.t.json<{ items: T.MemoryVersion[] }>({ method: "GET", path: `${this.path(namespace, key)}/versions`, options: o });
    return out.items;
  }
}
