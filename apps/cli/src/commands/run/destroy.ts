import { lockingCommand } from './_start'

export default lockingCommand(
  'destroy',
  "Destroy what a unit's configuration made, on an agent, holding the unit's lock; asks before destroying unless --auto-approve",
)
