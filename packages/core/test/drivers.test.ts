import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openFsStore } from '../src/storage/fs-store'
import { createMemoryStore } from '../src/storage/memory-store'
import { dependencyContract } from '../src/testing/dependency-contract'
import { objectStoreContract, type StoreFactory } from '../src/testing/object-store-contract'
import { coreContract } from '../src/testing/core-contract'

const memory: StoreFactory = () =>
  Promise.resolve({ store: createMemoryStore(), dispose: () => Promise.resolve() })

const fs: StoreFactory = async () => {
  const root = await mkdtemp(join(tmpdir(), 'cairn-fs-'))
  const store = await openFsStore(root)
  return {
    store,
    dispose: async () => {
      await store.close()
      await rm(root, { recursive: true, force: true })
    },
  }
}

objectStoreContract('memory', memory)
objectStoreContract('fs', fs)
coreContract('memory', memory)
coreContract('fs', fs)
dependencyContract('memory', memory)
dependencyContract('fs', fs)
