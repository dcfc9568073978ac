/**
 * Lets work in while the weight of what is in flight stays under `capacity`: `run(weight, fn)`
 * waits until its weight fits beside what runs, in the order asked. Work heavier than the whole
 * capacity runs alone, so nothing waits forever.
 */
export class WeightedGate {
  readonly #capacity: number
  #inFlight = 0
  readonly #waiting: { weight: number; start: () => void }[] = []

  constructor(capacity: number) {
    this.#capacity = capacity
  }

  async run<T>(weight: number, fn: () => Promise<T>): Promise<T> {
    const held = Math.min(Math.max(weight, 0), this.#capacity)
    if (this.#waiting.length > 0 || this.#inFlight + held > this.#capacity) {
      await new Promise<void>((start) => {
        this.#waiting.push({ weight: held, start })
      })
    } else {
      this.#inFlight += held
    }
    try {
      return await fn()
    } finally {
      this.#inFlight -= held
      this.#wake()
    }
  }

  #wake(): void {
    for (let next = this.#waiting[0]; next !== undefined; next = this.#waiting[0]) {
      if (this.#inFlight + next.weight > this.#capacity) return
      this.#waiting.shift()
      this.#inFlight += next.weight
      next.start()
    }
  }
}
