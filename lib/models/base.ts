import { Model, type QueryBuilderType, type TransactionOrKnex } from 'objection';
import { db } from '../db';

/**
 * The base of the service's models: a query made without a transaction takes `db()` at once, the
 * pool or the transaction of the unit of work the caller runs in (lib/db.ts unitOfWork), so a
 * model read inside an idempotent request sees that request's own writes.
 */
export class ServiceModel extends Model {
  static query<M extends Model>(this: new (...args: any[]) => M, trxOrKnex?: TransactionOrKnex): QueryBuilderType<M> {
    return Model.query.call(this, trxOrKnex ?? db()) as QueryBuilderType<M>;
  }
}
