import { lockingCommand } from './_start'

export default lockingCommand(
  'apply',
  "Plan and apply a unit's configuration on an agent, holding the unit's lock for the whole run; asks before applying unless --auto-approve",
)
