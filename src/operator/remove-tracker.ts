import type { AccessService } from './access-service';
import type { DeliveryAdmin, RemovedTracker } from './delivery-admin';

/** What removing a tracker did: what Redis held for it, and the roles and token limits on it taken away. */
export interface TrackerRemoval extends RemovedTracker {
  revoked: { people: number; tokens: number };
}

/**
 * Removes a tracker (DeliveryAdmin.removeTracker), then every role and token limit on its id
 * (AccessService.forgetTracker), in that order: a failure between the two leaves roles on a tracker
 * that is gone, never a tracker that its people can no longer reach.
 */
export async function removeTracker(delivery: DeliveryAdmin, access: AccessService, trackerId: string): Promise<TrackerRemoval> {
  const removed = await delivery.removeTracker(trackerId);
  return { ...removed, revoked: await access.forgetTracker(trackerId) };
}
