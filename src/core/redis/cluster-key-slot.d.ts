/** The Redis Cluster hash slot of a key (CRC16 of its hash tag, or of the whole key), 0–16383. */
declare module 'cluster-key-slot' {
  function calculateSlot(key: string | Buffer): number;
  export = calculateSlot;
}
