export { SheetsFake, type LoggedRequest, type SheetsFakeOptions } from './server';
export { ManualClock, GOOGLE_QUOTAS, type QuotaLimits } from './quota';
export type { Fault, SheetsMethod } from './faults';
export type { Sheet } from './sheet';
export { columnLetters, parseA1, quoteSheet } from './a1';
