/** A JSON body left as its text: the route has it parsed elsewhere (a spec, by the spec reader's thread). */
export class JsonText {
  constructor(readonly text: string) {}
}
