// JSON Merge Patch (RFC 7396) between two documents: what the If-Match update helper sends for a
// working memory its callback changed.

type JSONObject = Record<string, unknown>;

function isObject(v: unknown): v is JSONObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** deepEqual compares two JSON values. */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((v, i) => deepEqual(v, b[i]));
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => k in b && deepEqual(a[k], b[k]));
  }
  return false;
}

/**
 * mergePatch is the merge patch that turns from into to: removed keys are null, changed values
 * are replaced (objects patched key by key). A null in to cannot be said in a merge patch: the
 * key is removed. An empty object means no change.
 */
export function mergePatch(from: JSONObject, to: JSONObject): JSONObject {
  const patch: JSONObject = {};
  for (const k of Object.keys(from)) {
    if (!(k in to) || to[k] === null || to[k] === undefined) {
      if (from[k] !== null) patch[k] = null;
    }
  }
  for (const [k, v] of Object.entries(to)) {
    if (v === null || v === undefined) continue;
    const old = from[k];
    if (isObject(old) && isObject(v)) {
      const sub = mergePatch(old, v);
      if (Object.keys(sub).length > 0) patch[k] = sub;
    } else if (!deepEqual(old, v)) {
      patch[k] = v;
    }
  }
  return patch;
}
