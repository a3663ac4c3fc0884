import { coalesceUpserts } from '../../../connectors/shared/coalesce-upserts';
import { contextValue, RESERVED_COLUMNS, RESERVED_COLUMNS_BY_KIND, reservedValues, reservedValuesOfChange } from '../../../connectors/shared/reserved-columns';
import type { Properties, TrackedRecord } from '../../../src/core/records/types';

const none = () => Object.create(null) as Properties;

describe('reserved columns', () => {
  it('lists the columns in their fixed order, per kind', () => {
    expect(RESERVED_COLUMNS).toEqual(['_id', '_uid', '_sid', '_event', '_event_at', '_received_at']);
    expect(RESERVED_COLUMNS_BY_KIND.user).toEqual(['_id', '_uid', '_received_at']);
    expect(RESERVED_COLUMNS_BY_KIND.session).toEqual(['_id', '_uid', '_sid', '_received_at']);
    expect(RESERVED_COLUMNS_BY_KIND.event).toEqual(RESERVED_COLUMNS);
  });

  it('maps an event to all six, with null for what it lacks', () => {
    const event: TrackedRecord = { kind: 'event', id: 'e1', receivedAt: 'R', event: 'view', eventAt: 'E', sid: 's1', properties: none() };
    expect(reservedValues(event)).toEqual({ _id: 'e1', _uid: null, _sid: 's1', _event: 'view', _event_at: 'E', _received_at: 'R' });
  });

  it('maps a merged user to the id and receive time of its latest update', () => {
    const a: TrackedRecord = { kind: 'user', id: 'a', receivedAt: 'R1', uid: 'u1', properties: none() };
    const b: TrackedRecord = { kind: 'user', id: 'b', receivedAt: 'R2', uid: 'u1', properties: none() };
    const [change] = coalesceUpserts('user', [a, b]).changes;
    expect(reservedValuesOfChange('user', change!)).toEqual({ _id: 'b', _uid: 'u1', _received_at: 'R2' });
  });

  it('maps a session to its _sid and merged _uid, null when none was sent', () => {
    const s: TrackedRecord = { kind: 'session', id: 'a', receivedAt: 'R', sid: 's1', properties: none() };
    const [change] = coalesceUpserts('session', [s]).changes;
    expect(reservedValuesOfChange('session', change!)).toEqual({ _id: 'a', _uid: null, _sid: 's1', _received_at: 'R' });
  });

  it('maps request context to the captured fields only', () => {
    expect(contextValue(undefined)).toBeUndefined();
    expect(contextValue({})).toBeUndefined();
    expect(contextValue({ ip: '1.2.3.4', referer: 'https://x/' })).toEqual({ ip: '1.2.3.4', referer: 'https://x/' });
  });
});
