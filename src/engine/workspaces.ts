export interface HubOptions {
  env: NodeJS.ProcessEnv;
  watch: boolean;
  onWarning: (message: string) => void;
}

/** Every workspace the engine has open, by root. */
export class WorkspaceHub {
  constructor(readonly options: HubOptions) {}

  async close(): Promise<void> {}
}
