/**
 * Strings shared by every unit of a search index, each kept once and named by a small number:
 * resource types (a few hundred distinct among millions of instances) and identity attribute names.
 *
 * @internal
 */
export class Interner {
  readonly #ids = new Map<string, number>()
  readonly #names: string[] = []

  /** The number of a string, given one now if it has none. */
  intern(name: string): number {
    let id = this.#ids.get(name)
    if (id === undefined) {
      id = this.#names.length
      this.#names.push(name)
      this.#ids.set(name, id)
    }
    return id
  }

  /** The number of a string already interned, or undefined: then nothing holds it. */
  find(name: string): number | undefined {
    return this.#ids.get(name)
  }

  name(id: number): string {
    return this.#names[id] ?? ''
  }

  /** Every string interned, by number. */
  names(): string[] {
    return [...this.#names]
  }
}
