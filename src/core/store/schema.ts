/**
 * The store's tables. Rows land in `rollout_rows` / `step_rows` in flushed chunks
 * (memory stays bounded whatever the input size) tagged with an import id; readers see
 * them only through the `rollouts` / `steps` views, once the `imports` table records
 * that id — written in one transaction when the import command finishes. Rows of a
 * command that died midway carry ids above every recorded import and are swept at the
 * next open, so an import lands whole or not at all.
 */
export const SCHEMA_VERSION = 1;

/** The tables whose rows belong to a rollout import (`import_id`): dropped together when an import is undone. */
export const IMPORT_TABLES = ['step_rows', 'token_rows', 'rollout_rows', 'quarantine'] as const;

export const DDL = [
  `create table if not exists meta (key varchar primary key, value varchar)`,
  `create table if not exists imports (
     id integer primary key,
     path varchar not null,
     format varchar not null,
     run_id varchar not null,
     version varchar,
     status varchar not null,            -- committed (rows are only visible through recorded imports)
     content_hash varchar,               -- sha256 of bytes [0, end_offset)
     start_offset bigint not null default 0,
     end_offset bigint,
     end_line bigint,
     file_size bigint,
     file_mtime_ms double,
     rollouts bigint not null default 0,
     steps bigint not null default 0,
     bad_records bigint not null default 0,
     started_at timestamp not null default current_timestamp,
     finished_at timestamp default current_timestamp
   )`,
  `create table if not exists runs (
     id varchar primary key,
     version varchar,
     framework varchar,
     source varchar,
     created_at timestamp
   )`,
  `create table if not exists rollout_rows (
     id bigint not null,
     import_id integer not null,
     run_id varchar not null,
     version varchar,
     framework varchar not null,
     step integer not null,
     split varchar not null,
     prompt_id varchar not null,
     group_id varchar not null,
     sample_index integer not null,
     prompt varchar,
     prompt_format varchar,
     response varchar,
     response_format varchar,
     ground_truth varchar,
     reward double,
     reward_components varchar, -- JSON text
     correct boolean,
     extracted_answer varchar,
     advantage double,
     stop_reason varchar,
     response_tokens integer,
     num_turns integer,
     errors varchar,            -- JSON text
     timing_ms double,
     data_source varchar,
     env_class varchar,
     extra varchar,             -- JSON text
     raw_ref varchar not null,
     response_chars integer,             -- computed at import: length metrics never read the text
     no_answer boolean                   -- computed at import: no extractable final answer
   )`,
  // Stores created before these columns existed get them (empty) on open.
  `alter table runs add column if not exists domain varchar`,
  `alter table rollout_rows add column if not exists response_chars integer`,
  `alter table rollout_rows add column if not exists no_answer boolean`,
  `create table if not exists step_rows (
     rollout_id bigint not null,
     import_id integer not null,
     turn integer not null,
     role varchar not null,
     action_kind varchar not null,
     command varchar,
     exit_code integer,
     observation_bytes integer,
     format_error boolean not null,
     timeout boolean not null,
     truncated boolean not null,
     tokens integer
   )`,
  `create table if not exists quarantine (
     import_id integer not null,
     path varchar not null,
     line bigint,
     reason varchar not null,
     raw varchar
   )`,
  // Point lookups (a rollout and its steps, for the explorer) go through ART indexes.
  `create index if not exists rollout_rows_id on rollout_rows (id)`,
  `create index if not exists step_rows_rollout on step_rows (rollout_id)`,
  `create or replace view rollouts as select r.* exclude (import_id) from rollout_rows r where r.import_id in (select id from imports)`,
  `create or replace view steps as select s.* exclude (import_id) from step_rows s where s.import_id in (select id from imports)`,
  // Per-token values a dump carried (log-probabilities, entropies), one compact list per
  // rollout, turn (the model call's ordinal) and kind: never part of a query over rollouts.
  `create table if not exists token_rows (
     rollout_id bigint not null,
     import_id integer not null,
     turn integer not null,
     kind varchar not null,
     token_values float[] not null
   )`,
  `create index if not exists token_rows_rollout on token_rows (rollout_id)`,
  `create or replace view rollout_tokens as select t.* exclude (import_id) from token_rows t where t.import_id in (select id from imports)`,
  // Training curves (store/curves): the scalars a trainer logs per step, from its console
  // log, metrics files or TensorBoard event files. Their imports are recorded apart from
  // rollout imports, with the same rule: rows are visible once their import is recorded.
  `create table if not exists metric_imports (
     id integer primary key,
     path varchar not null,
     format varchar not null,
     run_id varchar not null,
     version varchar,
     content_hash varchar not null,      -- sha256 of bytes [0, end_offset)
     end_offset bigint,
     end_line bigint,
     file_size bigint,
     file_mtime_ms double,
     points bigint not null default 0,
     bad_records bigint not null default 0,
     finished_at timestamp default current_timestamp
   )`,
  `create table if not exists metric_rows (
     import_id integer not null,
     run_id varchar not null,
     version varchar,
     source varchar not null,            -- the reader: verl-console, verl-file, tensorboard, mlflow
     step bigint not null,
     metric varchar not null,
     value double,                       -- NaN and ±inf kept as logged
     wall_time double,                   -- seconds since the epoch, where the format has it
     ordinal bigint not null             -- line (or byte offset) in the file: later wins
   )`,
  // One value per (run, version, metric, step): a resumed run logs its steps again, and
  // the value logged last (latest import, then latest line) is the one that stands.
  `create or replace view metrics as
     select run_id, version, step, metric, value, wall_time, source
     from metric_rows m where m.import_id in (select id from metric_imports)
     qualify row_number() over (partition by run_id, version, metric, step order by import_id desc, ordinal desc) = 1`,
];

/**
 * No extractable final answer: none extracted, and the response has no `A:` line, no
 * boxed{} answer, no `####` answer and no "answer is". Evaluated by DuckDB at import; a
 * CASE, not an AND, so that the patterns run only over responses with no extracted answer
 * (DuckDB evaluates both sides of an AND in a select list, and the scan of every response
 * would cost about as much as parsing it). Each pattern is searched on its own, and the
 * ones that need a regular expression only where a plain search finds their text: one
 * pattern of four alternatives is read byte by byte, twice as slow over kilobytes of text.
 */
export const NO_ANSWER_SQL = `(case when extracted_answer is null or trim(extracted_answer) in ('', '[INVALID]', 'None')
  then not (case when strpos(response, '\\boxed{') > 0 or regexp_matches(response, '(?i)answer is') then true
                 when (case when contains(response, '####') then regexp_matches(response, '####\\s*\\S') else false end) then true
                 when prefix(response, 'A:') or contains(response, chr(10) || 'A:') then regexp_matches(response, '(?m)^A:\\s*\\S')
                 else false end) else false end)`;
