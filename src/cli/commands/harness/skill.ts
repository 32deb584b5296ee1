import path from 'node:path';
import { readWorkingManifest, type Harness } from '../../../core/harness/repo';
import { applySkill, findSkill, listSkills, recordSkill, searchSkills, shareSkill, skillsDir, type LoadedSkill } from '../../../core/harness/skills';
import { UsageError } from '../../args';
import { flagString, out, type Command } from '../../command';
import { harnessContext } from '../../context';
import { HARNESS_FLAG, JSON_FLAG } from './common';

async function context(flags: Record<string, string | boolean>, required: boolean): Promise<{ h: Harness | null; dirs: { harness?: string; library?: string } }> {
  let h: Harness | null = null;
  try {
    h = await harnessContext(flags).harness();
  } catch (e) {
    if (required) throw e;
  }
  let library = flagString(flags, 'library');
  if (!library && h) {
    try {
      const lib = readWorkingManifest(h.root).skills?.library;
      if (lib) library = path.resolve(h.root, lib);
    } catch {
      // an invalid manifest is reported by the commands that need it
    }
  }
  if (!h && !library) throw new UsageError('run inside a harness (or pass --harness DIR) or name a skill library with --library DIR');
  return { h, dirs: { harness: h ? skillsDir(h) : undefined, library: library ? path.resolve(library) : undefined } };
}

const row = (s: LoadedSkill) => `${s.record.id.padEnd(28)} ${s.record.category.padEnd(20)} ${s.record.domains.join(',').padEnd(14)} ${s.record.shared ? 'shared ' : s.origin === 'library' ? 'library' : 'local  '} ${s.record.trigger}`;

export const skill: Command = {
  summary: 'record, list, search, show, apply (cherry-pick) and share skills',
  usage: [
    'evotrainer skill record --from vN --category CAT --trigger TEXT [--id ID] [--title T] [--expected TEXT]',
    '       evotrainer skill list | show ID | search [--trigger TEXT] [--domain D] [--category CAT]',
    '       evotrainer skill apply SKILL --onto vN [--harness DIR] [--worktree | --checkout]',
    '       evotrainer skill share SKILL --library DIR',
  ].join('\n'),
  flags: {
    from: { type: 'string', description: 'record: the promoted version to distil' },
    id: { type: 'string', description: 'record: skill id (default from the hypothesis)' },
    title: { type: 'string', description: 'record: title' },
    category: { type: 'string', description: 'record/search: reward_design, filter_mechanism, training_stability, evaluation_protocol, cross_domain_transfer' },
    trigger: { type: 'string', description: 'record: the trigger condition; search: words it must contain' },
    expected: { type: 'string', description: 'record: expected outcome' },
    domain: { type: 'string', description: 'search: only skills that worked in this domain' },
    onto: { type: 'string', description: 'apply: the version to build on' },
    worktree: { type: 'boolean', description: 'apply: check the new version out under .evotrainer/worktrees/' },
    checkout: { type: 'boolean', description: 'apply: switch the current checkout to the new version' },
    slug: { type: 'string', description: 'apply: branch slug' },
    library: { type: 'string', description: 'skill library folder (default: skills.library of evotrainer.yaml)' },
    ...HARNESS_FLAG,
    ...JSON_FLAG,
  },
  async run(flags, [sub, ...rest]) {
    const print = (json: unknown, text: string) => out(flags.json ? JSON.stringify(json, null, 2) : text);
    switch (sub) {
      case 'record': {
        const from = flagString(flags, 'from');
        if (!from) throw new UsageError('--from vN is required (a promoted version)');
        const { h, dirs } = await context(flags, true);
        const r = await recordSkill(h!, { from, id: flagString(flags, 'id'), title: flagString(flags, 'title'), category: flagString(flags, 'category'), trigger: flagString(flags, 'trigger'), expected: flagString(flags, 'expected'), library: dirs.library });
        print({ ...r.skill.record, file: r.skill.file, created: r.created }, `${r.created ? 'recorded' : 'added evidence to'} skill ${r.skill.record.id} → ${r.skill.file} (domains: ${r.skill.record.domains.join(', ')})\nNext: commit it (git add skills/ && git commit), or share it with \`evotrainer skill share ${r.skill.record.id} --library DIR\` once it worked in 2 domains`);
        return 0;
      }
      case 'list':
      case 'search': {
        const { dirs } = await context(flags, false);
        const { skills, problems } = listSkills(dirs);
        const found = sub === 'search' ? searchSkills(skills, { trigger: flagString(flags, 'trigger'), domain: flagString(flags, 'domain'), category: flagString(flags, 'category') }) : skills;
        for (const p of problems) process.stderr.write(`evotrainer skill: skipped ${p}\n`);
        print(found.map((s) => ({ ...s.record, patch: undefined, file: s.file, origin: s.origin })), found.length ? found.map(row).join('\n') : 'No skills match. Record one from a promoted version with `evotrainer skill record --from vN`.');
        return 0;
      }
      case 'show': {
        if (!rest[0]) throw new UsageError('skill show needs a skill id');
        const { dirs } = await context(flags, false);
        const s = findSkill(rest[0], dirs);
        print({ ...s.record, file: s.file, origin: s.origin }, `${s.file}\n\n${(await import('node:fs')).readFileSync(s.file, 'utf8')}`);
        return 0;
      }
      case 'apply': {
        const ref = rest[0];
        const onto = flagString(flags, 'onto');
        if (!ref || !onto) throw new UsageError('skill apply needs a skill and --onto vN');
        if (flags.worktree && flags.checkout) throw new UsageError('choose --worktree or --checkout, not both');
        const { h, dirs } = await context(flags, true);
        const r = await applySkill(h!, findSkill(ref, dirs), { onto, worktree: Boolean(flags.worktree), checkout: Boolean(flags.checkout), slug: flagString(flags, 'slug') });
        const detail = r.outcome === 'clean' ? `${r.version} on ${r.branch} (${r.commit.slice(0, 12)})${r.worktree ? `, worktree ${r.worktree}` : ''}` : r.outcome === 'conflict' ? `in ${r.files.join(', ')}` : r.outcome === 'dirty-worktree' ? r.files.join(', ') : r.outcome === 'refused' ? r.violations.map((v) => `${v.path} [${v.rule}]`).join(', ') : '';
        print(r, `${r.outcome}${detail ? `: ${detail}` : ''}\nNext: ${r.next}`);
        return r.outcome === 'clean' ? 0 : 1;
      }
      case 'share': {
        if (!rest[0]) throw new UsageError('skill share needs a skill id');
        const { dirs } = await context(flags, false);
        if (!dirs.library) throw new UsageError('--library DIR is required (or skills.library in evotrainer.yaml)');
        const file = shareSkill(findSkill(rest[0], { harness: dirs.harness }), dirs.library);
        print({ id: rest[0], file }, `shared ${rest[0]} → ${file}`);
        return 0;
      }
      default:
        throw new UsageError(sub ? `unknown subcommand "${sub}"; use record, list, show, search, apply or share` : 'use `skill record|list|show|search|apply|share`');
    }
  },
};
