import type { SetupGuide } from '../types';

/**
 * The least rights Tributary needs, as docs/connect-postgres.md gives them (a test keeps the two
 * the same): log in, stage each batch in a temporary table, and make and extend its own tables.
 */
export const LEAST_RIGHTS_SQL = `CREATE ROLE tributary LOGIN PASSWORD 'choose-one';
GRANT CONNECT, TEMPORARY ON DATABASE analytics TO tributary;
-- Either let it make its schema…
GRANT CREATE ON DATABASE analytics TO tributary;
-- …or make the schema for it and give it that schema only:
CREATE SCHEMA shop AUTHORIZATION tributary;`;

/**
 * The console's first setup of a `postgres` destination: a connection string pasted as the
 * provider gives it (split when saved, the password kept as a secret), the schema, and what to do
 * in the database first.
 */
export const POSTGRES_SETUP: SetupGuide = {
  primary: [
    {
      setting: 'url',
      label: 'Connection string',
      hint: 'As your provider gives it, e.g. postgres://tributary:secret@db.example.com:5432/analytics?sslmode=require. When saved it is split into host, port, database, user, password and sslmode (under Advanced), and the password is kept as a secret.',
    },
    { setting: 'schema', label: 'Schema', hint: 'Where the tables users, sessions and events go; created when missing. Empty: the tracker id in lower case (shop-eu → shop_eu).' },
  ],
  splits: { setting: 'url', into: ['host', 'port', 'database', 'user', 'password', 'sslmode'] },
  steps: [
    {
      text: 'Create a role with the least rights Tributary needs: as a superuser or the database’s owner (psql, or your provider’s SQL editor), with your database’s name for analytics and a password of your own. Run CREATE SCHEMA connected to that database. docs/connect-postgres.md explains each right.',
      code: LEAST_RIGHTS_SQL,
    },
    {
      text: 'Let this relay reach the server: on a managed service (RDS, Cloud SQL, Supabase, Neon), allow the relay’s address in its network settings; on your own server, listen_addresses and pg_hba.conf.',
      url: 'https://www.postgresql.org/docs/current/auth-pg-hba-conf.html',
    },
    { text: 'Paste that role’s connection string below (the provider’s Connect page shows it); managed services want sslmode=require or stricter. Test, then add.' },
  ],
};
