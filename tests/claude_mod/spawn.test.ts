// hookbus's agent.spawn module in Claude Code's own engine: `claude plugin test` on the
// installed plugin folder, this file copied to its tests/claude/ (tests/e2e/
// test_claude_spawn_mod.py does it). The hooks a test registers with `on` sit beneath
// the module and stand for the engine: process.run answers as `hookbus guard --json`
// would, agent.spawn beneath starts the child (returning the model it got).
import { expect, mock, test } from 'claude-code/testing'

const SPAWN = { prompt: 'SUBTASK: do it', model: 'opus', subagentType: 'general-purpose' }

// The world beneath the module: the guard answers `stdout` (or the run throws `fails`),
// and every call and spawn is kept.
function world(on: any, answer: { stdout?: string; exitCode?: number; fails?: string }) {
  const seen: { runs: any[]; spawned: any[]; env: any[] } = { runs: [], spawned: [], env: [] }
  on('process.run', ($: any, e: any) => {
    seen.runs.push(e)
    if (e.argv[0] === '/bin/sh') return { value: { exitCode: 0, stdout: '', stderr: '' } }
    if (answer.fails !== undefined) throw new Error(answer.fails)
    return { value: { exitCode: answer.exitCode ?? 0, stdout: answer.stdout ?? '', stderr: '' } }
  })
  on('env.set', ($: any, e: any) => { seen.env.push(e); return { value: undefined } })
  on('session.info', () => ({ value: { transcriptPath: '/p/sess-1.jsonl' } }))
  mock.env(on, { PWD: '/work/proj', HOME: '/home/u' })
  on('agent.spawn', ($: any, e: any) => { seen.spawned.push(e); return { model: e.model ?? 'inherit', agentId: 'a1' } })
  return seen
}

const guardRuns = (seen: any) => seen.runs.filter((r: any) => r.argv[0] !== '/bin/sh')

test('session.start sets HOOKBUS_CLAUDE_SPAWN_MOD to the plugin root', async ($, on) => {
  const seen = world(on, {})
  on('session.start', ($: any, e: any) => e)
  await $.session.start({ source: 'startup', cwd: '/work/proj' })
  expect(seen.env).toHaveLength(1)
  expect(seen.env[0].name).toBe('HOOKBUS_CLAUDE_SPAWN_MOD')
  expect(seen.env[0].value.endsWith('/hookbus')).toBe(true)
})

test('the guard is asked with the contract, and its model is the child model', async ($, on) => {
  const seen = world(on, { stdout: '{"action":"cap","model":"sonnet","clear_model":false,"message":"","reasons":[]}' })
  const started = await $.agent.spawn(SPAWN)
  expect(started.model).toBe('sonnet')
  expect(seen.spawned[0].model).toBe('sonnet')
  const [run] = guardRuns(seen)
  expect(run.argv.slice(-2)).toEqual(['guard', '--json'])
  expect(run.init.timeoutMs).toBeGreaterThan(0)
  expect(JSON.parse(run.init.stdin)).toMatchObject({ host: 'claude', session_id: 'sess-1', cwd: '/work/proj', agent_type: 'general-purpose', model: 'opus', prompt: 'SUBTASK: do it' })
})

test('clear_model drops the child model', async ($, on) => {
  const seen = world(on, { stdout: '{"action":"cap","model":null,"clear_model":true,"message":"","reasons":[]}' })
  await $.agent.spawn(SPAWN)
  expect(seen.spawned[0].model).toBeUndefined()
})

test('a refusal denies the spawn with the message, and nothing starts', async ($, on) => {
  const seen = world(on, { stdout: '{"action":"refuse","model":null,"clear_model":false,"message":"do it yourself","reasons":[]}' })
  const answered = await $.agent.spawn(SPAWN)
  expect(answered.deny).toContain('do it yourself')
  expect(seen.spawned).toHaveLength(0)
})

for (const [name, answer] of [
  ['a guard that cannot run', { fails: 'ENOENT' }],
  ['a guard that exits non-zero', { exitCode: 2, stdout: 'usage: hookbus' }],
  ['a guard that prints junk', { stdout: 'Traceback (most recent call last):' }],
] as const) {
  test(`${name} fails open: the spawn proceeds, recorded, the variable cleared`, async ($, on) => {
    const seen = world(on, answer)
    const started = await $.agent.spawn(SPAWN)
    expect(started.model).toBe('opus')
    expect(seen.spawned[0].model).toBe('opus')
    expect(seen.env).toHaveLength(1)
    expect(seen.env[0].name).toBe('HOOKBUS_CLAUDE_SPAWN_MOD')
    expect(seen.env[0].value).toBeUndefined()
    const [append] = seen.runs.filter((r: any) => r.argv[0] === '/bin/sh')
    const line = JSON.parse(append.argv[append.argv.length - 1])
    expect(line).toMatchObject({ event: 'spawn-mod-failed', host: 'claude', native: 'agent.spawn', session_id: 'sess-1' })
    expect(append.argv[4]).toBe('/home/u/.local/state/hookbus')
  })
}
