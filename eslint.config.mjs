import nextVitals from "eslint-config-next/core-web-vitals";
import nextTypescript from "eslint-config-next/typescript";

const FRAMEWORK_IMPORTS = {
  patterns: [
    { group: ["next", "next/*"], message: "lib/ is the framework-free domain core: no next/* imports." },
    {
      group: ["react", "react/*", "react-dom", "react-dom/*"],
      message: "lib/ is the framework-free domain core: no React.",
    },
    {
      group: ["next-auth", "next-auth/*"],
      message: "lib/ is the framework-free domain core: next-auth lives in app/_server.",
    },
  ],
};

const config = [
  {
    ignores: [
      ".next*/**",
      "node_modules/**",
      "lib/db/generated/**",
      ".data/**",
      ".test-data/**",
      "test-results/**",
      "playwright-report/**",
      ".scratch/**",
      "next-env.d.ts",
    ],
  },
  ...nextVitals,
  ...nextTypescript,
  {
    files: ["lib/**/*.{ts,tsx}"],
    rules: { "no-restricted-imports": ["error", FRAMEWORK_IMPORTS] },
  },
  {
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
    },
  },
];

export default config;
