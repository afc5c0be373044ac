// The user routes an admin uses for spend: another user's usage and budgets.
import type { CallOptions, Transport, WriteOptions } from "./transport.js";
import type * as T from "./types.js";

const enc = encodeURIComponent;

/** Users are the admin routes of users' usage and budgets (a user given by id or name). */
export class Users {
  constructor(private readonly t: Transport) {}

  /** usage is a user's spend, as GET /v1/me/usage answers that user (admins only). */
  usage(user: string, o: CallOptions & { days?: number } = {}): Promise<T.UserUsage> {
    return this.t.json({ method: "GET", path: `/v1/users/${enc(user)}/usage`, query: { days: o.days }, options: o });
  }

  /** budget is a user's budgets (admins only). */
  budget(user: string, o: CallOptions = {}): Promise<T.UserBudget> {
    return this.t.json({ method: "GET", path: `/v1/users/${enc(user)}/budget`, options: o });
  }

  /** setBudget replaces a user's budgets; a day or month left out has none (admins only). */
  setBudget(user: string, budget: T.UserBudget, o: WriteOptions = {}): Promise<T.UserBudget> {
    return this.t.json({ method: "PUT", path: `/v1/users/${enc(user)}/budget`, body: budget, write: true, options: o });
  }
}
