// This file is yours: entity-gen created it once and never changes or deletes it. The generated
// routes of MEMO call the hooks below; see "Customizing" in the README.
import type { EntityHooks } from '@entity-gen/runtime';
import type { Memo } from '../entities/memo/types.js';

/**
 * Lifecycle hooks and custom routes of MEMO; every member is optional. A before-hook may
 * return a changed record (it is validated again) or reject the request with
 * `throw new HttpError(422, 'reason')` (import `HttpError` from '@entity-gen/runtime').
 */
export const memoHooks: EntityHooks<Memo> = {
  // beforeInsert(record, ctx) { return record; },
  // afterInsert(record, ctx) {},
  // beforeUpdate(record, previous, ctx) { return record; },
  // afterUpdate(record, previous, ctx) {},
  // beforeDelete(record, ctx) {},
  // afterDelete(record, ctx) {},
  // afterCommit(event) {},  // after each committed change: event.seq, op, id, record (docs/events.md)
  // middleware: [async (ctx, next) => { await next(); }],  // in front of /data/memo
  // routes(router, store) {
  //   router.get('/data/memo/:id/summary', async (ctx) => {
  //     const record = await store.get(ctx.params['id'] ?? '');
  //     ctx.body = { status: 'success', data: { found: record !== undefined } };
  //   });
  // },
};
