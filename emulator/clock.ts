/**
 * The emulator's virtual clock: real time plus an offset that `POST /_control/clock` advances,
 * so tests can cross the 120 s handoff TTL and the 24 h windows without waiting.
 */
export class VirtualClock {
  #offsetMs = 0;

  now(): number {
    return Date.now() + this.#offsetMs;
  }

  advance(seconds: number): void {
    this.#offsetMs += seconds * 1000;
  }

  reset(): void {
    this.#offsetMs = 0;
  }
}
